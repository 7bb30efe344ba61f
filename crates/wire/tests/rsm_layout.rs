//! The RSM frame layout with literal offsets, and the refusals of malformed frames.

use myrix_wire::rsm::{
    emit_head, Body, Error, Frame, Header, Repr, READ_REPLY_HEAD, SIGNAL_NO_ACCUMULATE, WRITE_HEAD,
};

const H: Header = Header {
    session: 0x0102_0304,
    seq: 0x0506,
    ack: 0x0708,
    seq_hi: 0x0a,
    ack_hi: 0x0b,
};

fn emit(body: Body<'_>) -> Vec<u8> {
    let r = Repr { header: H, body };
    let mut buf = vec![0u8; r.buffer_len()];
    assert_eq!(r.emit(&mut buf).unwrap(), buf.len());
    assert_eq!(Repr::parse_bytes(&buf).unwrap(), r);
    buf
}

/// Literal offsets, written out byte by byte: the layout the docs promise.
#[test]
fn layout_has_the_documented_offsets() {
    let hdr = [0x52, 0, 0x0a, 0x0b, 1, 2, 3, 4, 5, 6, 7, 8];
    let b = emit(Body::Connect {
        segment: 0x8000_0001,
        perm: 0o600,
        node: 0x0a0b_0c0d,
        uid: 1000,
        gid: 100,
        conn: 0x1122_3344,
    });
    assert_eq!(b.len(), 36);
    assert_eq!((b[0], b[1]), (0x52, 1));
    assert_eq!(b[2..12], hdr[2..12]);
    assert_eq!(b[12..16], [0x80, 0, 0, 1]);
    assert_eq!(b[16..20], [0, 0, 0x01, 0x80]);
    assert_eq!(b[20..24], [0x0a, 0x0b, 0x0c, 0x0d]);
    assert_eq!(b[24..28], 1000u32.to_be_bytes());
    assert_eq!(b[28..32], 100u32.to_be_bytes());
    assert_eq!(b[32..36], [0x11, 0x22, 0x33, 0x44]);

    let b = emit(Body::ConnectReply {
        conn: 9,
        status: 27,
        exporter_conn: 0xaabb_ccdd,
        length: 0x0102_0304_0506_0708,
    });
    assert_eq!((b.len(), b[1]), (36, 2));
    assert_eq!(b[12..16], [0, 0, 0, 9]);
    assert_eq!(b[16..20], [0, 0, 0, 27]);
    assert_eq!(b[20..24], [0xaa, 0xbb, 0xcc, 0xdd]);
    assert_eq!(b[24..28], [0; 4]);
    assert_eq!(b[28..36], [1, 2, 3, 4, 5, 6, 7, 8]);

    let b = emit(Body::Disconnect { conn: 5 });
    assert_eq!((b.len(), b[1], b[15]), (16, 3, 5));

    let b = emit(Body::Write {
        conn: 7,
        offset: 0x1000,
        data: b"xyz",
    });
    assert_eq!((b.len(), b[1], WRITE_HEAD), (27, 4, 24));
    assert_eq!(b[12..16], [0, 0, 0, 7]);
    assert_eq!(b[16..24], [0, 0, 0, 0, 0, 0, 0x10, 0]);
    assert_eq!(&b[24..], b"xyz");

    let b = emit(Body::ReadReq {
        conn: 7,
        request: 8,
        offset: 0x20,
        length: 0x8000,
    });
    assert_eq!((b.len(), b[1]), (32, 5));
    assert_eq!(b[12..16], [0, 0, 0, 7]);
    assert_eq!(b[16..20], [0, 0, 0, 8]);
    assert_eq!(b[27], 0x20);
    assert_eq!(b[28..32], [0, 0, 0x80, 0]);

    let b = emit(Body::ReadReply {
        request: 8,
        status: 0,
        offset: 0x20,
        data: b"ab",
    });
    assert_eq!((b.len(), b[1], READ_REPLY_HEAD), (30, 6, 28));
    assert_eq!((b[15], b[19], b[27]), (8, 0, 0x20));
    assert_eq!(&b[28..], b"ab");

    let b = emit(Body::Flush { conn: 3, token: 4 });
    assert_eq!((b.len(), b[1], b[15], b[19]), (20, 7, 3, 4));
    let b = emit(Body::FlushReply {
        token: 4,
        status: 38,
    });
    assert_eq!((b.len(), b[1], b[15], b[19]), (20, 8, 4, 38));
    let b = emit(Body::Signal {
        to_importer: false,
        conn: 3,
        flags: SIGNAL_NO_ACCUMULATE,
    });
    assert_eq!((b.len(), b[1], b[15], b[19]), (20, 9, 3, 2));
    let b = emit(Body::Signal {
        to_importer: true,
        conn: 3,
        flags: 0,
    });
    assert_eq!((b.len(), b[1]), (20, 10));
    let b = emit(Body::Abort {
        conn: 3,
        status: 40,
    });
    assert_eq!((b.len(), b[1], b[15], b[19]), (20, 11, 3, 40));
    let b = emit(Body::Ack);
    assert_eq!(b, [0x52, 12, 0x0a, 0x0b, 1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn rejects_bad_tag_kind_lengths_and_reserved_bytes() {
    let mut b = emit(Body::Flush { conn: 1, token: 2 });
    assert!(matches!(
        Frame::new_checked(&b[..19]),
        Err(Error::Truncated { need: 20, .. })
    ));
    let mut longer = b.clone();
    longer.push(0);
    assert_eq!(
        Frame::new_checked(&longer[..]).unwrap_err(),
        Error::Field("trailing bytes")
    );
    b[1] = 0;
    assert_eq!(Frame::new_checked(&b[..]).unwrap_err(), Error::Kind(0));
    b[1] = 13;
    assert_eq!(Frame::new_checked(&b[..]).unwrap_err(), Error::Kind(13));
    b[0] = myrix_wire::mx::VERSION;
    assert_eq!(Frame::new_checked(&b[..]).unwrap_err(), Error::Tag(1));
    assert!(Frame::new_checked(&[][..]).is_err());

    let mut r = emit(Body::ConnectReply {
        conn: 1,
        status: 0,
        exporter_conn: 2,
        length: 3,
    });
    r[25] = 1;
    assert!(matches!(Frame::new_checked(&r[..]), Err(Error::Field(_))));
}

#[test]
fn data_cannot_end_past_u64_max() {
    let w = Repr {
        header: H,
        body: Body::Write {
            conn: 1,
            offset: u64::MAX - 1,
            data: b"ab",
        },
    };
    let mut buf = [0u8; 64];
    assert!(w.emit(&mut buf).is_err());
    let ok = Repr {
        header: H,
        body: Body::Write {
            conn: 1,
            offset: u64::MAX - 2,
            data: b"ab",
        },
    };
    let n = ok.emit(&mut buf).unwrap();
    buf[23] = 0xff; // offset u64::MAX
    assert!(Repr::parse_bytes(&buf[..n]).is_err());
    assert!(emit_head(&H, &Body::Ack, &mut buf, 1).is_err());
    assert!(matches!(
        ok.emit(&mut buf[..25]),
        Err(Error::Buffer { need: 26, .. })
    ));
}
