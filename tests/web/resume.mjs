// The "resumed after a restart" notice of Hearth's page in headless Chromium. The Rust test
// kills the daemon mid-answer and starts it again; this script says where it is on stdout
// ("MID", then "NOTICE") and waits for a line on stdin before going on. After the reload the
// page shows the notice while the resumed answer is still coming, then the whole answer.
// Prints one JSON line last; the Rust test decides.
//
// usage: node resume.mjs BASE_URL PASSWORD SHOTS_DIR
import { launch } from "./launch.mjs";
import { createInterface } from "node:readline";

const [base, password, shots] = process.argv.slice(2);
const lines = createInterface({ input: process.stdin });
const told = () => new Promise((resolve) => lines.once("line", resolve));
const seen = {};
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
  await page.goto(base);
  await page.fill("#password", password);
  await page.click("#login-form button");
  await page.waitForSelector("#chat:not([hidden])");
  await page.fill("#text", "tell me the whole story");
  await page.click("#send");
  await page.locator(".msg.agent").last().locator("span", { hasText: "once" }).waitFor({ timeout: 20000 });
  console.log("MID");
  await told();

  await page.reload();
  await page.waitForSelector("#chat:not([hidden])");
  await page.locator("#notice:not([hidden])", { hasText: "resumed" }).waitFor({ timeout: 20000 });
  seen.notice = await page.locator("#notice").innerText();
  await page.screenshot({ path: `${shots}/resumed-notice.png` });
  console.log("NOTICE");
  await told();

  const answer = page.locator(".msg.agent").last();
  await answer.locator("span", { hasText: "told again" }).waitFor({ timeout: 20000 });
  seen.answer = (await answer.innerText()).trim();
  seen.messages = await page.locator(".msg").allInnerTexts();
  await page.screenshot({ path: `${shots}/resumed-answer.png` });
} finally {
  await browser.close();
  lines.close();
}
console.log(JSON.stringify(seen));
