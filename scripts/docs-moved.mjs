#!/usr/bin/env node
// Run once when the README was split into docs/ (issue 46): where did each heading, code block and
// sentence of the old README (commit c60fd51, or the file given) go? Prints, for each heading and
// each code block, the page and heading it is now under, and flags (with "NOT FOUND") any heading,
// code line or sentence found on no page. Exits 1 when something is flagged.
//
//   node scripts/docs-moved.mjs [OLD_README]   (default: git show c60fd51:README.md)
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const oldText = process.argv[2]
  ? readFileSync(process.argv[2], "utf8")
  : execFileSync("git", ["show", "c60fd51:README.md"], { cwd: root, encoding: "utf8" });

/**
 * Old headings renamed or cut up on purpose: the heading and the page that now holds its text. Each
 * is still checked: its section's sentences and code must be found like any other.
 */
const RENAMED = {
  "The two commands": "README.md: Run it; Supported runtimes and tests",
  "Try it (curl)": "README.md: From npm start to a mint, and each guide's worked example",
  "Console: a web page for operators": "docs/console.md",
  "Collections: an index of every token": "docs/collections.md",
  "Wallets: keys the service holds": "docs/wallets.md",
  "Jobs: airdrops and whitelists of any size": "docs/jobs.md",
  Configuration: "docs/configuration.md",
  "Operate it": "docs/operating.md",
  "Metadata: hosted documents, a fair reveal, IPFS packaging": "docs/metadata.md",
  Layout: "docs/development.md",
};

/**
 * Old sentences rewritten on purpose, with a phrase of their new wording and why. The phrase must be
 * found in the new text, or the sentence is flagged as lost.
 */
const REWORDED = [
  ["An HTTP API that mints", "An HTTP API that mints, whitelists", "README's first sentence, unchanged in substance"],
  ["It comes with the reference collection", "It comes with its reference collection", "README intro, shortened"],
  [
    "The API contract is `../shared/docs/API.md`;",
    "The API reference is [docs/api.md](docs/api.md)",
    "README and docs/operations.md",
  ],
  ["Run the service (embedded chain", "deploys the reference collection and serves the API", "README: Run it"],
  ["Run every test (lint, format", "Run every test", "README: Supported runtimes and tests"],
  ["Supported: Node 20, 22 and 24", "Supported: Node 20, 22 and 24", "docs/development.md"],
  ["CI (`.ci/run`) runs this", "runs the\nREADME's test command", "docs/development.md, names the command"],
  ["`npm start` prints a banner like this", "It prints:", "README: Run it"],
  [
    "The `sh` examples of this README run",
    "The `sh` examples of the README and of every guide",
    "docs/development.md: The docs test",
  ],
  ["`test/readme.test.ts`", "`test/docs.test.ts` runs them so", "docs/development.md: the test was renamed"],
  ["Nothing is downloaded at run time", "Nothing is downloaded at run time", "docs/development.md"],
  ["browser tests)", "the console's browser tests", "docs/development.md"],
  ["Beside Node, the tests need", "Beside Node, the tests need", "docs/development.md"],
  [
    "Moving from the embedded dev chain to a public network",
    "a public network is one setting away (`RPC_URL` or `CHAINS`)",
    "README intro: now RPC_URL or CHAINS",
  ],
  [
    "For production, see [Operate it]",
    "For production, see [Production entry]",
    "docs/operating.md: a link to its own section",
  ],
  [
    "The banner names where the wallets' master key is (see [Wallets])",
    "The banner names where the wallets' master key is (see [The master key])",
    "docs/operating.md: the master key's section moved there",
  ],
  [
    "20 tools, by intent",
    "22 tools, by intent",
    "docs/mcp.md: the code has 22 tools (set_base_uri and reveal were missing)",
  ],
  [
    "`set_paused`, `set_cost`, `create_job`, `cancel_job`",
    "`set_paused`, `set_cost`, `set_base_uri`, `reveal`, `create_job`",
    "docs/mcp.md: the two tools added",
  ],
  [
    "`tokenURI`, `total-supply`, `GET /nft/operations/{id}`, `/collections/*`",
    "`tokenURI`, `total-supply`, `GET /nft/operations` and",
    "docs/access-keys.md: the scope table brought up to the code's routes",
  ],
  [
    "`addUserAddressToWhitelist`, `setPaused`, `setCost`",
    "`addUserAddressToWhitelist`, `addToWhitelist`, `setPaused`, `setCost`",
    "docs/access-keys.md: the scope table brought up to the code's routes",
  ],
  [
    "**required** with `RPC_URL`; ≥ 16 characters",
    "**required** with `RPC_URL` or `CHAINS`",
    "docs/configuration.md: CHAINS needs it too",
  ],
  [
    "# (a keystore to import: ethers writes one here, as geth or Foundry would)",
    "# (a keystore to import: ethers writes one here, as geth or Foundry would;",
    "docs/wallets.md: a low scrypt cost",
  ],
  [
    '.encrypt("correct horse").then(',
    'encryptKeystoreJson(Wallet.createRandom(), "correct horse", { scrypt: { N: 1 << 14 } })',
    "docs/wallets.md: the example's keystore made quickly (ethers' scrypt in JavaScript took seconds)",
  ],
  ["Errors use one envelope", "Errors use one envelope,", "docs/operations.md: followed by the codes API.md lacks"],
  [
    "![Operations](docs/console/operations.png)",
    "![Operations](console/operations.png)",
    "docs/console.md: paths relative to docs/",
  ],
  [
    "readme.test.ts     the README's sh examples",
    "docs.test.ts       the sh examples of README.md and docs/",
    "docs/development.md: the test was renamed",
  ],
];

const norm = (s) =>
  s
    .replace(/\s+/g, " ")
    .replace(/\]\([^)]*\)/g, "]")
    .trim();

/** Pages in order: README.md, then docs/*.md. */
const pages = [
  "README.md",
  ...readdirSync(path.join(root, "docs"))
    .filter((f) => f.endsWith(".md"))
    .sort()
    .map((f) => `docs/${f}`),
].map((file) => ({ file, lines: readFileSync(path.join(root, file), "utf8").split("\n") }));
const corpus = norm(pages.map((p) => p.lines.join("\n")).join("\n"));

/** The page and heading a piece of text (normalized) is under, or undefined; `first` is searched first. */
function whereIs(text, first) {
  const wanted = norm(text);
  const order = first ? [...pages.filter((p) => p.file === first), ...pages.filter((p) => p.file !== first)] : pages;
  for (const page of order) {
    let heading = "(top)";
    let flat = "";
    const starts = []; // [offset in flat, heading of that line]
    let fenced = false;
    for (const line of page.lines) {
      if (line.startsWith("```")) fenced = !fenced;
      if (!fenced && /^#{1,6} /.test(line)) heading = line.replace(/^#+ /, "");
      const text = norm(line);
      if (text === "") continue;
      starts.push([flat.length, heading]);
      flat += `${text} `;
    }
    const at = flat.indexOf(wanted);
    if (at < 0) continue;
    let under = "(top)";
    for (const [offset, h] of starts) if (offset <= at) under = h;
    return `${page.file}: ${under}`;
  }
  return undefined;
}

const lines = oldText.split("\n");
const out = [];
let flagged = 0;
const flag = (what) => {
  flagged++;
  out.push(`  NOT FOUND: ${what}`);
};

// 1. Headings and code blocks, in the old README's order.
for (let i = 0; i < lines.length; i++) {
  const line = lines[i];
  if (/^#{1,6} /.test(line)) {
    const title = line.replace(/^#+ /, "");
    const same = pages.find((p) => p.lines.some((l) => /^#{1,6} /.test(l) && l.replace(/^#+ /, "") === title));
    if (same) out.push(`heading  L${i + 1} "${title}" -> ${same.file} (same heading)`);
    else if (RENAMED[title]) out.push(`heading  L${i + 1} "${title}" -> ${RENAMED[title]} (renamed or split)`);
    else {
      out.push(`heading  L${i + 1} "${title}"`);
      flag(`heading "${title}"`);
    }
    continue;
  }
  if (!line.startsWith("```")) continue;
  const end = lines.indexOf("```", i + 1);
  const body = lines.slice(i + 1, end);
  const whole = whereIs(body.join("\n"));
  if (whole) out.push(`code     L${i + 1}-${end + 1} ${line} (${body.length} lines) -> ${whole}`);
  else {
    // split between pages: where each line went
    const places = new Set();
    const lost = [];
    let last;
    for (const codeLine of body) {
      if (codeLine.trim() === "") continue;
      const reworded = REWORDED.find(([old]) => norm(codeLine).includes(norm(old)));
      const at = whereIs(reworded && corpus.includes(norm(reworded[1])) ? reworded[1] : codeLine, last);
      if (at) places.add((last = at.split(":")[0]));
      else lost.push(codeLine);
    }
    out.push(`code     L${i + 1}-${end + 1} ${line} (${body.length} lines) -> split: ${[...places].join(", ")}`);
    for (const l of lost) flag(`code line L${i + 1}+: ${l.trim()}`);
  }
  i = end;
}

// 2. Every sentence of the old prose (outside code blocks, tables by cell).
let prose = [];
let inCode = false;
for (const line of lines) {
  if (line.startsWith("```")) inCode = !inCode;
  else if (!inCode && !/^#{1,6} /.test(line) && !line.startsWith("<!--")) prose.push(line);
}
const sentences = prose
  .join("\n")
  .split(/\n\s*\n|(?<=[.:;])\s+(?=[A-Z`*(])|\n(?=- )|\n(?=\d\. )|\|/)
  .map((s) => norm(s.replace(/^[-*\d.]+\s+/, "")))
  .filter((s) => s.length > 3 && !/^[-: ]+$/.test(s));
const lostSentences = [];
for (const sentence of sentences) {
  if (corpus.includes(sentence)) continue;
  const reworded = REWORDED.find(([old]) => sentence.includes(norm(old)));
  if (reworded && corpus.includes(norm(reworded[1]))) continue;
  lostSentences.push(sentence);
}
out.push("", `sentences: ${sentences.length} checked, ${sentences.length - lostSentences.length} found`);
for (const s of lostSentences) flag(`sentence: ${s}`);

out.push(
  "",
  flagged === 0 ? "Nothing flagged: every heading, code block and sentence is placed." : `${flagged} flagged`,
);
console.log(out.join("\n"));
process.exitCode = flagged === 0 ? 0 : 1;
