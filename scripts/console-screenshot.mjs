#!/usr/bin/env node
// docs/console.png: the console's operations view in Debian's headless Chromium (playwright-core),
// against a running service that has made a few operations (the README's first steps will do).
//
//   NFT_OPS_URL=http://127.0.0.1:3000 NFT_OPS_KEY=<API_KEY> node scripts/console-screenshot.mjs [OUT.png]
import { chromium } from "playwright-core";

const url = process.env.NFT_OPS_URL ?? "http://127.0.0.1:3000";
const key = process.env.NFT_OPS_KEY;
if (!key) throw new Error("Set NFT_OPS_KEY to an access key (the banner's API_KEY)");
const out = process.argv[2] ?? "docs/console.png";

const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--no-sandbox"] });
try {
  // 1280 wide as the console tests take theirs; short, so the PNG stays small
  const page = await browser.newPage({ viewport: { width: 1280, height: 500 } });
  await page.goto(`${url}/console`);
  await page.getByLabel("Access key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.click('nav button[data-view="operations"]');
  await page.waitForSelector("[data-block]:not([data-block=''])", { timeout: 20_000 });
  await page.waitForTimeout(1_500); // the list's first refresh
  await page.screenshot({ path: out });
  console.log(`wrote ${out}`);
} finally {
  await browser.close();
}
