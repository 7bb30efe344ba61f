//! Operating-system calls that belong to neither a transport nor the endpoint.
#![allow(unsafe_code)]

use std::io;

/// Pins the calling thread (the whole process, for a single-threaded one) to one CPU.
pub fn pin_to_cpu(cpu: usize) -> io::Result<()> {
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no such CPU"));
    }
    // SAFETY: a zeroed cpu_set_t is a valid empty set; CPU_SET stays inside it (checked
    // above); sched_setaffinity only reads the set.
    let r = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
