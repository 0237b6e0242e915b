//! Two gateways on one real PostgreSQL (`[store] url`), as behind a load balancer: a link stored
//! through one opens through the other, a day's token quota spent through one counts on the other,
//! a token made by `flint-gateway token create --config` signs in through both, and history pushed
//! through one is pulled through the other.

mod common;
mod pg;

use std::net::SocketAddr;
use std::process::Command;

use common::{Client, Gateway, start_with};
use flint_gateway::auth::SESSION_COOKIE;
use flint_gateway::config::{AuthMode, Config, PersonLimits};
use flint_gateway::shares::ShareCreated;
use flint_protocol::{ErrorCode, ServerMessage};

fn http() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

/// Two gateways, each with its own upstream, on the database `url`.
async fn pair(url: &str, configure: impl Fn(&mut Config)) -> (Gateway, Gateway) {
    let on = |config: &mut Config| {
        config.store.url = Some(url.to_owned());
        configure(config);
    };
    (start_with(on).await, start_with(on).await)
}

#[tokio::test]
async fn a_link_stored_through_one_gateway_opens_through_the_other() {
    let cluster = pg::Cluster::shared();
    let (a, b) = pair(&cluster.fresh_database(), |_| {}).await;
    let link = flint_protocol::share::encode(&flint_protocol::share::SharedPrompt::new("a page"));
    let response = http()
        .post(format!("http://{}/api/share", a.addr))
        .json(&serde_json::json!({ "link": link }))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    let created: ShareCreated = response.json().await.expect("json");
    let opened = http().get(format!("http://{}{}", b.addr, created.path)).send().await.expect("request");
    assert_eq!(opened.status(), 303, "B opens A's link");
    let location = opened.headers().get("location").and_then(|l| l.to_str().ok()).unwrap_or_default();
    assert_eq!(location, format!("/#p={link}"));
    // And B's owner check knows A's owner: the same person deletes it through B.
    let deleted =
        http().delete(format!("http://{}/api/share/{}", b.addr, created.id)).send().await.expect("delete");
    assert_eq!(deleted.status(), 204, "the same person, through the other gateway");
    assert_eq!(
        http().get(format!("http://{}{}", a.addr, created.path)).send().await.expect("get").status(),
        404
    );
}

#[tokio::test]
async fn a_quota_spent_through_one_gateway_counts_on_the_other() {
    let cluster = pg::Cluster::shared();
    let limits = PersonLimits { sockets: 0, streams: 0, starts_per_minute: 0, tokens_per_day: 50 };
    let (a, b) = pair(&cluster.fresh_database(), |config| config.limits.signed_in = limits).await;
    // `connect` reads the Hello; the quota follows it.
    let mut on_a = Client::connect(a.addr).await;
    assert!(matches!(on_a.next().await, ServerMessage::Quota { used: 0, limit: 50, .. }));
    on_a.start(1, "counter@5000").await;
    let (done, _) = on_a.collect(&[1]).await;
    let ServerMessage::Done { usage, .. } = &done[0].1.end else { panic!("{:?}", done[0].1.end) };
    let spent = u64::from(usage.completion_tokens);
    assert_eq!(spent, 50, "the counter fixture is longer than the quota: cut where it is spent");
    let mut on_b = Client::connect(b.addr).await;
    let quota = on_b.next().await;
    assert!(matches!(quota, ServerMessage::Quota { used, .. } if used == spent), "B's meter: {quota:?}");
    on_b.start(1, "counter@5000").await;
    let (refused, _) = on_b.collect(&[1]).await;
    match &refused[0].1.end {
        ServerMessage::Error { code: ErrorCode::RateLimited, message, .. } => {
            assert!(message.contains("tokens_per_day"), "{message}");
        }
        other => panic!("B must refuse what A spent: {other:?}"),
    }
}

async fn sign_in(addr: SocketAddr, token: &str) -> reqwest::Response {
    http()
        .post(format!("http://{addr}/api/signin"))
        .header("origin", format!("http://{addr}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("token={token}"))
        .send()
        .await
        .expect("request")
}

async fn models_with(addr: SocketAddr, cookie: &str) -> u16 {
    let response = http()
        .get(format!("http://{addr}/api/models"))
        .header("cookie", cookie)
        .send()
        .await
        .expect("request");
    response.status().as_u16()
}

#[tokio::test]
async fn a_token_made_by_the_cli_signs_in_through_both_gateways() {
    let cluster = pg::Cluster::shared();
    let url = cluster.fresh_database();
    let dir = std::env::temp_dir().join(format!("flint-two-gateways-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let config = dir.join("flint.toml");
    std::fs::write(&config, format!("[store]\nurl = {url:?}\n\n[auth]\nmode = \"tokens\"\n"))
        .expect("config");
    let out = Command::new(env!("CARGO_BIN_EXE_flint-gateway"))
        .args(["token", "create", "ada", "--config"])
        .arg(&config)
        .output()
        .expect("the gateway binary runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let token = String::from_utf8(out.stdout).expect("utf-8").trim().to_owned();
    assert!(token.starts_with("flint_"), "{token}");
    let (a, b) = pair(&url, |config| config.auth.mode = AuthMode::Tokens).await;
    let mut cookies = Vec::new();
    for gateway in [&a, &b] {
        let response = sign_in(gateway.addr, &token).await;
        assert_eq!(response.status(), 303, "signs in through {}", gateway.addr);
        let set = response.headers().get("set-cookie").and_then(|v| v.to_str().ok()).unwrap_or_default();
        let pair = set.split(';').next().unwrap_or_default().to_owned();
        assert!(pair.starts_with(&format!("{SESSION_COOKIE}=")), "{set}");
        cookies.push(pair);
    }
    // A session made through one gateway is good on the other: the load balancer may send the
    // next request anywhere.
    assert_eq!(models_with(b.addr, &cookies[0]).await, 200);
    assert_eq!(models_with(a.addr, &cookies[1]).await, 200);
    assert_eq!(models_with(a.addr, &format!("{SESSION_COOKIE}={}", "A".repeat(43))).await, 401);
    let listed = Command::new(env!("CARGO_BIN_EXE_flint-gateway"))
        .args(["token", "list", "--config"])
        .arg(&config)
        .output()
        .expect("runs");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(listed.starts_with("ada\t") && listed.contains("2 signed in"), "{listed}");
}

/// A record of `ada`'s history as the app pushes it.
fn history_record(revision: u64, updated_at: u64, prompt: &str) -> flint_protocol::sync::HistoryRecord {
    flint_protocol::sync::HistoryRecord {
        id: "1763900000000".into(),
        kind: flint_protocol::sync::RecordKind::Generation,
        body: serde_json::json!({ "prompt": prompt, "model": "m", "code": "<p></p>", "status": "done" }),
        revision,
        updated_at,
        device: "laptop".into(),
        deleted: false,
    }
}

async fn history_push(addr: SocketAddr, record: &flint_protocol::sync::HistoryRecord) -> serde_json::Value {
    let response = http()
        .post(format!("http://{addr}/api/history/push"))
        .header("origin", format!("http://{addr}"))
        .header("x-forwarded-user", "ada")
        .json(&serde_json::json!({ "records": [record] }))
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    response.json().await.expect("json")
}

async fn history_pull(addr: SocketAddr) -> serde_json::Value {
    let response = http()
        .get(format!("http://{addr}/api/history?since=0"))
        .header("x-forwarded-user", "ada")
        .send()
        .await
        .expect("request");
    assert_eq!(response.status(), 200);
    response.json().await.expect("json")
}

#[tokio::test]
async fn history_pushed_through_one_gateway_appears_through_the_other() {
    let cluster = pg::Cluster::shared();
    let (a, b) = pair(&cluster.fresh_database(), |config| {
        config.auth.mode = AuthMode::Proxy;
        config.auth.trusted_proxies = vec!["127.0.0.1".parse().expect("address")];
    })
    .await;
    let newer = history_record(2, 2_000, "a clock, edited on the laptop");
    history_push(a.addr, &history_record(1, 1_000, "a clock")).await;
    history_push(a.addr, &newer).await;
    let through_b = history_pull(b.addr).await;
    assert_eq!(through_b["records"], serde_json::json!([newer]), "B serves what A kept");
    // A phone that last saw revision 1 pushes its edit through B: A's newer copy stays, and B
    // answers it so the phone takes it.
    let stale = history_record(1, 9_000, "a clock, edited on the phone");
    let answer = history_push(b.addr, &stale).await;
    assert_eq!(answer["kept"], serde_json::json!([newer]));
    assert_eq!(history_pull(a.addr).await["records"], serde_json::json!([newer]));
}
