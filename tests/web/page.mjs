// Drives Hearth's page in a real headless Chromium (Debian's, through playwright-core): log in,
// send a message and watch it stream, stop an answer mid-way, reload and see the history,
// see what was recalled for a turn and why, search memory and forget an item, disable and
// re-enable a plugin. Screenshots go to SHOTS. Prints one JSON line
// with what it saw; the Rust test decides.
//
// usage: node page.mjs BASE_URL PASSWORD SHOTS_DIR SOURCE_URL
import { launch } from "./launch.mjs";

const [base, password, shots, sourceUrl] = process.argv.slice(2);
const SOURCE_KEY = "sk-page-secret-0123456789";
const seen = {};
const browser = await launch();
try {
  // A phone-sized screen: the page must work there.
  const page = await browser.newPage({ viewport: { width: 390, height: 800 } });
  const loaded = [];
  // Every response body the page gets: the source's API key must be in none of them.
  const bodies = [];
  page.on("response", async (r) => {
    const len = Number((await r.allHeaders())["content-length"] || 0);
    loaded.push({ url: r.url(), len });
    if (!r.url().includes("/events")) bodies.push(await r.text().catch(() => ""));
  });
  await page.goto(base);
  await page.fill("#password", password);
  await page.click("#login-form button");
  await page.waitForSelector("#chat:not([hidden])");
  seen.page_bytes = loaded.filter((r) => !r.url.includes("/api/")).reduce((a, r) => a + r.len, 0);
  await page.screenshot({ path: `${shots}/1-logged-in.png` });

  // A tool call, visible in the answer's bubble: the model keeps a note in memory.
  await page.fill("#text", "remember where the teapot is");
  await page.click("#send");
  const noted = page.locator(".msg.agent").last();
  await noted.locator("span", { hasText: "noted" }).waitFor({ timeout: 20000 });
  await noted.locator(".tool").first().waitFor({ timeout: 20000 });
  seen.tool_line = await noted.locator(".tool").first().innerText();

  // A question the note answers: recall puts the note in front of the model for this turn.
  await page.fill("#text", "where is the blue teapot?");
  await page.click("#send");
  await page.locator(".msg.agent").last().locator("span", { hasText: "attic" }).waitFor({ timeout: 20000 });

  // Streaming: the answer grows in steps before it is complete.
  await page.fill("#text", "count slowly");
  await page.click("#send");
  const agent = page.locator(".msg.agent").last();
  const growth = [];
  const t0 = Date.now();
  while (Date.now() - t0 < 20000) {
    const text = (await agent.innerText()).trim();
    if (growth[growth.length - 1] !== text) growth.push(text);
    if (text === "alpha beta gamma delta") break;
    await page.waitForTimeout(20);
  }
  seen.growth = growth;
  await page.screenshot({ path: `${shots}/2-streamed.png` });

  // Stop mid-answer: the text stays cut and the bubble says so.
  await page.fill("#text", "talk forever");
  await page.click("#send");
  const second = page.locator(".msg.agent").last();
  await second.locator("span").filter({ hasText: "never" }).waitFor({ timeout: 20000 });
  await page.click("#stop");
  await second.locator(".stopped").waitFor({ timeout: 20000 });
  seen.stopped_text = (await second.innerText()).trim();
  await page.screenshot({ path: `${shots}/3-stopped.png` });

  // Reload: the history comes back from the journal.
  await page.reload();
  await page.waitForSelector(".msg.user");
  seen.history = await page.locator(".msg").allInnerTexts();
  await page.screenshot({ path: `${shots}/4-reloaded.png` });

  // Memory: search finds the note with its id; forget asks first, then it is gone.
  await page.click("nav button[data-tab=memory]");
  // What was recalled for that turn, and why (score, time), from the journal.
  await page.locator("tr[data-recalled]").first().waitFor({ timeout: 20000 });
  seen.recalled_rows = await page.locator("tr[data-recalled]").allInnerTexts();
  seen.recalled_id = await page.locator("tr[data-recalled]").first().getAttribute("data-recalled");
  seen.recalled_turn = await page.locator("tr[data-turn] th").first().innerText();
  await page.fill("#memory-q", "teapot attic");
  await page.click("#memory-form button");
  // The remembered note (a number), after the turns said so recently they are still in the
  // working window (`w12`, "said recently").
  const remembered = page.locator('tr[data-memory]:not([data-memory^="w"])');
  await remembered.first().waitFor({ timeout: 20000 });
  seen.memory_rows = await remembered.allInnerTexts();
  seen.recent_rows = await page.locator('tr[data-memory^="w"]').allInnerTexts();
  seen.memory_id = await remembered.first().getAttribute("data-memory");
  await page.screenshot({ path: `${shots}/5-memory.png` });
  page.once("dialog", (d) => { seen.confirm = d.message(); d.accept(); });
  await remembered.first().getByRole("button", { name: "forget" }).click();
  await page.locator(`tr[data-memory="${seen.memory_id}"]`).waitFor({ state: "detached", timeout: 20000 });
  await Promise.all([
    page.waitForResponse((r) => r.url().includes("/api/memory?")),
    page.click("#memory-form button"),
  ]);
  await page.waitForTimeout(300);
  seen.memory_after = await page.locator(`tr[data-memory="${seen.memory_id}"]`).count();

  // Plugins: disable the timer, then enable it again.
  await page.click("nav button[data-tab=plugins]");
  const row = page.locator("tr[data-plugin=timer]");
  await row.waitFor();
  await row.getByRole("button", { name: "disable" }).click();
  await page.locator("tr[data-plugin=timer]", { hasText: "disabled" }).waitFor({ timeout: 20000 });
  seen.disabled = (await page.locator("tr[data-plugin=timer]").innerText()).trim();
  await page.screenshot({ path: `${shots}/6-disabled.png` });
  await page.locator("tr[data-plugin=timer]").getByRole("button", { name: "enable" }).click();
  await page.locator("tr[data-plugin=timer]").getByRole("button", { name: "disable" }).waitFor({ timeout: 20000 });
  seen.enabled = (await page.locator("tr[data-plugin=timer]").innerText()).trim();
  await page.screenshot({ path: `${shots}/7-enabled.png` });

  // Sources: add one with an API key, test it, remove it; the key is never sent back.
  await page.click("nav button[data-tab=sources]");
  await page.fill("#src-name", "spare");
  await page.fill("#src-url", sourceUrl);
  await page.fill("#src-model", "spare-model");
  await page.fill("#src-key", SOURCE_KEY);
  await page.click("#source-form button");
  const spare = page.locator("tr[data-source=spare]");
  await spare.waitFor({ timeout: 20000 }).catch(async (e) => {
    throw new Error(`${e.message}\nsources: ${await page.locator("#sources").innerText()}`);
  });
  seen.source_row = (await spare.innerText()).trim();
  seen.key_field_after = await page.inputValue("#src-key");
  await spare.getByRole("button", { name: "test" }).click();
  await page.waitForFunction(() => document.querySelector("#sources-msg").textContent.includes("spare"), null, { timeout: 20000 });
  seen.source_test = await page.locator("#sources-msg").innerText();
  await page.screenshot({ path: `${shots}/8-source-added.png` });
  page.once("dialog", (d) => { seen.source_confirm = d.message(); d.accept(); });
  await spare.getByRole("button", { name: "remove" }).click();
  await page.locator("tr[data-source=spare]").waitFor({ state: "detached", timeout: 20000 });
  await page.screenshot({ path: `${shots}/9-source-removed.png` });
  seen.key_in_responses = bodies.filter((b) => b.includes(SOURCE_KEY)).length;
  seen.key_in_page = (await page.content()).includes(SOURCE_KEY);
} finally {
  await browser.close();
}
console.log(JSON.stringify(seen));
