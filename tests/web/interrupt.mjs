// The interrupt/priority option of Hearth's page in headless Chromium: while a long answer
// streams, a message sent with "interrupt" at L3 preempts it; the page shows the urgent answer
// and the long one, resumed and complete. Prints one JSON line; the Rust test decides.
//
// usage: node interrupt.mjs BASE_URL PASSWORD SHOTS_DIR
import { launch } from "./launch.mjs";

const [base, password, shots] = process.argv.slice(2);
const seen = {};
const browser = await launch();
try {
  const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
  await page.goto(base);
  await page.fill("#password", password);
  await page.click("#login-form button");
  await page.waitForSelector("#chat:not([hidden])");

  await page.fill("#text", "tell me something long");
  await page.click("#send");
  const long = page.locator(".msg.agent").nth(0);
  await long.locator("span", { hasText: "w2" }).waitFor({ timeout: 20000 });

  await page.check("#interrupt");
  await page.selectOption("#priority", "L3");
  await page.fill("#text", "the oven timer rang");
  await page.click("#send");
  const urgent = page.locator(".msg.agent").nth(1);
  await urgent.locator("span", { hasText: "Urgent handled." }).waitFor({ timeout: 30000 });
  await long.locator("span", { hasText: "The long answer, resumed." }).waitFor({ timeout: 30000 });
  seen.urgent = (await urgent.innerText()).trim();
  seen.long = (await long.innerText()).trim();
  seen.messages = await page.locator(".msg").allInnerTexts();
  await page.screenshot({ path: `${shots}/interrupt.png` });
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
