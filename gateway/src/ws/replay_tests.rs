use super::*;

fn frame(stream: StreamId, seq: Option<u32>, text: &str, last: bool) -> Outgoing {
    Outgoing { stream, frame: Utf8Bytes::from(text.to_owned()), seq, last }
}

fn texts(frames: Vec<Utf8Bytes>) -> Vec<String> {
    frames.iter().map(|f| f.as_str().to_owned()).collect()
}

#[test]
fn a_page_gets_exactly_the_frames_after_its_last_seq() {
    let mut r = Replay::new(1 << 20);
    r.open(1);
    r.keep(&frame(1, None, "started", false));
    for seq in 0..4 {
        r.keep(&frame(1, Some(seq), &format!("d{seq}"), false));
    }
    r.keep(&frame(1, None, "done", true));
    assert_eq!(texts(r.missed(1, None).unwrap()), ["started", "d0", "d1", "d2", "d3", "done"]);
    assert_eq!(texts(r.missed(1, Some(1)).unwrap()), ["d2", "d3", "done"]);
    assert_eq!(texts(r.missed(1, Some(3)).unwrap()), ["done"]);
    assert_eq!(r.missed(1, Some(9)), Err(EXPIRED), "a seq never sent");
    assert_eq!(r.missed(2, None), Err(EXPIRED), "a stream never kept");
}

#[test]
fn on_a_live_socket_the_oldest_frames_go_first_and_a_page_behind_them_is_told() {
    let mut r = Replay::new(10);
    r.open(1);
    r.open(2);
    r.keep(&frame(2, Some(0), "xxxx", false));
    r.keep(&frame(2, None, "end", true));
    for seq in 0..3 {
        r.keep(&frame(1, Some(seq), "abcd", false));
    }
    assert!(r.bytes() <= 10, "kept {} bytes", r.bytes());
    assert!(r.missed(2, Some(0)).is_err(), "the ended stream went first");
    assert_eq!(texts(r.missed(1, Some(1)).unwrap()), ["abcd"]);
    assert_eq!(r.missed(1, Some(0)).map(texts), Ok(vec!["abcd".to_owned(), "abcd".to_owned()]));
    r.keep(&frame(1, Some(3), "abcd", false));
    assert_eq!(r.missed(1, Some(0)), Err(TRIMMED), "seq 1 was let go before the page saw it");
    assert_eq!(r.missed(1, None), Err(TRIMMED));
}

#[test]
fn while_away_the_cap_gives_up_and_says_why() {
    let mut r = Replay::new(8);
    r.open(1);
    assert!(r.keep_away(&frame(1, Some(0), "abcd", false)));
    assert!(!r.keep_away(&frame(1, Some(1), "efghi", false)), "past the cap");
    r.give_up([3], OVERFLOWED);
    assert_eq!(r.missed(1, Some(0)), Err(OVERFLOWED));
    assert_eq!(r.missed(3, None), Err(OVERFLOWED), "a running stream with nothing kept yet");
    assert_eq!(r.bytes(), 0);
    assert!(r.is_lost(1));
    r.keep_away(&frame(1, Some(2), "late", false));
    assert_eq!(r.bytes(), 0, "frames of a stream given up on are not kept");
    r.open(1);
    assert!(!r.is_lost(1), "a new stream under the id starts afresh");
}

#[test]
fn a_pong_with_the_mark_lets_go_of_the_streams_that_had_ended_and_nothing_else() {
    let mut r = Replay::new(1 << 20);
    for id in 1..=3 {
        r.open(id);
        r.keep(&frame(id, Some(0), "text", false));
    }
    r.keep(&frame(1, None, "done", true));
    let mark = r.mark();
    // Ends after the ping left: the pong does not prove the page has it.
    r.keep(&frame(2, None, "done", true));
    let before = r.bytes();
    r.delivered(mark);
    assert_eq!(r.missed(1, None), Err(EXPIRED), "stream 1 is let go");
    assert!(!r.is_lost(1), "and not reported lost: the page has it whole");
    assert_eq!(r.bytes(), before - "text".len() - "done".len());
    assert_eq!(texts(r.missed(2, Some(0)).unwrap()), ["done"], "ended after the ping: kept");
    assert_eq!(texts(r.missed(3, None).unwrap()), ["text"], "still running: kept");
    r.delivered(r.mark());
    assert_eq!(r.missed(2, None), Err(EXPIRED));
    assert_eq!(r.bytes(), "text".len());
    // An old mark, or one from before a stream id was used again, frees nothing new.
    r.open(1);
    r.keep(&frame(1, Some(0), "again", true));
    r.delivered(mark);
    assert_eq!(texts(r.missed(1, None).unwrap()), ["again"]);
}
