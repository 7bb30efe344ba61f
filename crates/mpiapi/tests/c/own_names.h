/* Shared by the killed-job test programs (die_all.c, die_holding_win.c): the names
 * of the RSM shared-memory segments this process has published, which must be gone
 * once the job is. Include after <dirent.h>, <stdio.h>, <string.h>, <unistd.h>. */
#ifndef MYRIX_TEST_OWN_NAMES_H
#define MYRIX_TEST_OWN_NAMES_H

#define MAX_SOCKETS 65536

/* Prints (after "names PID") the names in /proc/net/unix that start with
 * "@myrix-rsm/" and whose inode is one of this process's sockets; returns how many. */
static int own_names(void) {
    static unsigned long inodes[MAX_SOCKETS];
    int n_inodes = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d)) && n_inodes < MAX_SOCKETS) {
        char link[256];
        ssize_t l = readlinkat(dirfd(d), e->d_name, link, sizeof link - 1);
        if (l <= 0)
            continue;
        link[l] = 0;
        unsigned long ino;
        if (sscanf(link, "socket:[%lu]", &ino) == 1)
            inodes[n_inodes++] = ino;
    }
    closedir(d);
    FILE *u = fopen("/proc/net/unix", "r");
    if (!u)
        return -1;
    char line[512];
    int found = 0;
    printf("names %d", (int)getpid());
    while (fgets(line, sizeof line, u)) {
        unsigned long ino;
        char path[300];
        if (sscanf(line, "%*s %*s %*s %*s %*s %*s %lu %299s", &ino, path) != 2)
            continue;
        if (strncmp(path, "@myrix-rsm/", 11) != 0)
            continue;
        for (int i = 0; i < n_inodes; i++)
            if (inodes[i] == ino) {
                printf(" %s", path);
                found++;
                break;
            }
    }
    fclose(u);
    printf("\n");
    fflush(stdout);
    return found;
}

#endif
