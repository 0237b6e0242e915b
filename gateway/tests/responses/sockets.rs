//! The Responses provider's upstream sockets (WebSocket mode): one per answer at once, reused
//! after, closed with a cancelled answer or a closed tab, replaced past their age, and HTTP from
//! then on where a server has no WebSocket mode.

use super::*;

#[tokio::test]
async fn variations_at_once_open_a_socket_each_and_later_requests_reuse_them() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    for stream in 1..=3 {
        client.start(stream, "counter@2000").await;
    }
    let (done, others) = client.collect(&[1, 2, 3]).await;
    assert!(others.is_empty(), "{others:?}");
    assert!(done.iter().all(|(_, o)| finished(o) == FinishReason::Stop && o.text == fixture("counter")));
    assert_eq!(gw.upstream.max_in_flight(), 3, "the three ran at once");
    let mut used: Vec<Option<u64>> = gw.upstream.requests().iter().map(|r| responses(r).socket).collect();
    used.sort();
    assert_eq!(used, [Some(1), Some(2), Some(3)], "one socket per variation");
    for stream in 4..=6 {
        client.start(stream, "counter@2000").await;
    }
    client.collect(&[4, 5, 6]).await;
    assert_eq!(gw.upstream.sockets().len(), 3, "the idle sockets are reused: {:?}", gw.upstream.sockets());
}

#[tokio::test]
async fn a_cancelled_answer_closes_its_socket_and_the_next_request_opens_another() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    client.start(1, "large@200").await;
    loop {
        if let ServerMessage::Delta { .. } = client.next().await {
            break;
        }
    }
    client.send(&ClientMessage::Cancel { stream: 1 }).await;
    let (done, _) = client.collect(&[1]).await;
    assert!(matches!(done[0].1.end, ServerMessage::Done { finish: FinishReason::Cancelled, .. }), "{done:?}");
    until_sockets(&gw, "the cancelled answer's socket should close", |s| s.len() == 1 && s[0].closed).await;
    let outcome = client.run(2, "counter@20000").await;
    assert_eq!(finished(&outcome), FinishReason::Stop);
    let log = gw.upstream.requests();
    assert!(log[0].closed_early, "the upstream saw the cancel: {log:?}");
    assert_eq!(responses(&log[1]).socket, Some(2), "a new socket, not the cancelled one");
}

#[tokio::test]
async fn a_server_without_websocket_mode_is_used_over_http_from_then_on() {
    let options = Options::new(fixtures_dir()).without_responses_websocket();
    let gw = start(options, ResponsesTransport::Websocket, |_| {}).await;
    let mut client = Client::connect(gw.addr).await;
    for stream in 1..=2 {
        let outcome = client.run(stream, "counter@20000").await;
        assert_eq!(finished(&outcome), FinishReason::Stop);
    }
    let log = gw.upstream.requests();
    assert!(log.iter().all(|r| responses(r).transport == "http"), "{log:?}");
    let sockets = gw.upstream.sockets();
    assert_eq!(sockets.len(), 1, "one refused handshake, then HTTP without trying again: {sockets:?}");
    assert!(sockets[0].refused);
}

#[tokio::test]
async fn a_socket_past_its_age_limit_is_replaced_by_a_new_one() {
    let age = |config: &mut ResponsesConfig| config.websocket_max_age = Some(Duration::from_millis(300));
    let gw = start(Options::new(fixtures_dir()), ResponsesTransport::Websocket, age).await;
    let mut client = Client::connect(gw.addr).await;
    let first = vec![user("make a counter")];
    let outcome = ask(&mut client, 1, "counter@20000", first.clone(), GenParams::default()).await;
    tokio::time::sleep(Duration::from_millis(400)).await;
    let mut second = first;
    second.extend([ChatMessage::new(Role::Assistant, outcome.text), user("make it blue")]);
    let outcome = ask(&mut client, 2, "counter@20000", second, GenParams::default()).await;
    assert_eq!(finished(&outcome), FinishReason::Stop);
    let turns: Vec<ResponsesRecord> = gw.upstream.requests().iter().map(|r| responses(r).clone()).collect();
    assert_eq!(turns[1].socket, Some(2), "a new socket: {turns:?}");
    assert_eq!((turns[1].input_items, turns[1].previous_response_id.as_deref()), (3, None), "sent whole");
    until_sockets(&gw, "the old socket should be closed", |s| s.len() == 2 && s[0].closed).await;
}

#[tokio::test]
async fn a_closed_tab_closes_its_sockets() {
    let gw = start_ws().await;
    let mut client = Client::connect(gw.addr).await;
    client.run(1, "counter@20000").await;
    assert!(!gw.upstream.sockets()[0].closed, "kept open for the tab's next request");
    client.leave().await;
    until_sockets(&gw, "the tab's socket should close with it", |s| s.len() == 1 && s[0].closed).await;
}
