// Starts Debian's Chromium headless for the page tests. A browser that dies while it starts
// (seen once in a CI run: SIGSEGV before its first page, on a loaded machine) is started again,
// up to three times, so a crash of the browser is not read as a fault of the page; each failed
// start is reported on stderr.
import { chromium } from "playwright-core";

const executablePath = process.env.CHROMIUM || "/usr/bin/chromium";

export async function launch() {
  for (let attempt = 1; ; attempt++) {
    try {
      return await chromium.launch({ executablePath, headless: true, args: ["--no-sandbox"] });
    } catch (e) {
      if (attempt >= 3) throw e;
      console.error(`chromium did not start (attempt ${attempt}): ${String(e).split("\n")[0]}`);
    }
  }
}
