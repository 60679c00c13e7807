// First byte of a streamed answer inside headless Chromium: the page's own wire path (fetch
// POST /api/chat, then an EventSource on the answer), timed with the page's clock from the
// submit to the first `delta` event. Prints {"first_byte_ms": [...]}; the bench reports it.
//
// usage: node first_byte.mjs BASE_URL PASSWORD ROUNDS
import { launch } from "./launch.mjs";

const [base, password, rounds] = process.argv.slice(2);
const browser = await launch();
try {
  const page = await browser.newPage();
  await page.goto(base);
  const ms = await page.evaluate(async ({ password, rounds }) => {
    const json = { "Content-Type": "application/json" };
    const login = await fetch("/api/login", { method: "POST", headers: json, body: JSON.stringify({ password }) });
    if (!login.ok) throw new Error(`login: ${login.status}`);
    const { csrf } = await login.json();
    const out = [];
    for (let i = 0; i < rounds; i++) {
      const t0 = performance.now();
      const r = await fetch("/api/chat", {
        method: "POST",
        headers: { ...json, "X-CSRF-Token": csrf },
        body: JSON.stringify({ text: `browser ${i}` }),
      });
      if (!r.ok) throw new Error(`chat: ${r.status}`);
      const { request_id } = await r.json();
      await new Promise((resolve, reject) => {
        const es = new EventSource(`/api/chat/${encodeURIComponent(request_id)}/events`);
        let first = true;
        es.addEventListener("delta", () => {
          if (first) { first = false; out.push(performance.now() - t0); }
        });
        es.addEventListener("done", () => { es.close(); resolve(); });
        es.onerror = () => { es.close(); reject(new Error("the event stream failed")); };
      });
    }
    return out;
  }, { password, rounds: Number(rounds) });
  console.log(JSON.stringify({ first_byte_ms: ms }));
} finally {
  await browser.close();
}
