use super::*;

fn edit(start: u32, end: u32, text: &str) -> LineEdit {
    LineEdit { start, end, text: text.into() }
}

#[test]
fn every_message_between_page_and_worker_round_trips() {
    let hello = ServerMessage::Hello { protocol: 1, gateway: "g".into(), resume: None, history: true };
    let responses = [
        WorkerResponse::Gateway { frame: hello },
        WorkerResponse::Lanes {
            lanes: vec![LaneUpdate { stream: 2, text_bytes: 3, ..LaneUpdate::default() }],
        },
        WorkerResponse::Connection(ConnectionReport::default()),
        WorkerResponse::Likeness(LikenessReport {
            job: 7,
            score: Some(0.5),
            findings: vec!["the page is 40 px taller than the picture".into()],
            problem: None,
            ms: 2.0,
        }),
    ];
    for response in responses {
        let json = serde_json::to_string(&response).expect("serialises");
        assert_eq!(serde_json::from_str::<WorkerResponse>(&json).expect("parses"), response, "{json}");
    }
    let requests = [
        WorkerRequest::UseKey { provider: "p".into(), key: Some(Secret::new("k")) },
        WorkerRequest::Cancel { stream: 4 },
        WorkerRequest::Online { online: false },
        WorkerRequest::Likeness {
            job: 7,
            mock: RgbaImage { width: 1, height: 1, rgba: "AAAA/w==".into() },
            page: RgbaImage { width: 1, height: 1, rgba: "////fw==".into() },
        },
    ];
    for request in requests {
        let json = serde_json::to_string(&request).expect("serialises");
        assert_eq!(serde_json::from_str::<WorkerRequest>(&json).expect("parses"), request, "{json}");
    }
}

#[test]
fn line_edits_replace_insert_and_delete_in_order() {
    let text = "a\nb\nc\n";
    assert_eq!(apply_line_edits(text, &[edit(1, 2, "B\n")]).as_deref(), Some("a\nB\nc\n"));
    assert_eq!(apply_line_edits(text, &[edit(0, 0, "z\n"), edit(1, 2, "")]).as_deref(), Some("z\nb\nc\n"));
    assert_eq!(apply_line_edits(text, &[edit(3, 3, "d\n")]).as_deref(), Some("a\nb\nc\nd\n"));
    assert_eq!(apply_line_edits("a\nb", &[edit(1, 2, "B")]).as_deref(), Some("a\nB"));
    assert_eq!(apply_line_edits(text, &[edit(5, 5, "x")]), None);
}
