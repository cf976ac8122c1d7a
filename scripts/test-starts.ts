/**
 * Sums a TEST_START_LOG file (test/support/start-log.ts): per runtime, how many child processes of
 * each kind the suite started and their CPU-seconds, then the test files that cost the most.
 *
 *   TEST_START_LOG=/tmp/starts.jsonl npm run test:only
 *   npm run test:starts /tmp/starts.jsonl
 */
import { readFileSync } from "node:fs";

interface Line {
  node: string;
  kind: string;
  file: string;
  wallSeconds: number;
  cpuSeconds: number;
}

const file = process.argv[2];
if (!file) {
  console.error("usage: npm run test:starts <the TEST_START_LOG file>");
  process.exit(2);
}
const lines = readFileSync(file, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Line);

const TOP = 15;
for (const node of [...new Set(lines.map((line) => line.node))].sort()) {
  const mine = lines.filter((line) => line.node === node);
  console.log(`Node ${node}`);
  const byKind = group(mine, (line) => line.kind);
  let starts = 0;
  let cpu = 0;
  for (const [kind, list] of byKind) {
    const seconds = sum(list);
    starts += kind === "mocha" ? 0 : list.length;
    cpu += seconds;
    console.log(
      `  ${kind.padEnd(15)} ${String(list.length).padStart(4)} started  ${seconds.toFixed(0).padStart(6)} CPU-s`,
    );
  }
  console.log(`  ${"all".padEnd(15)} ${String(starts).padStart(4)} started  ${cpu.toFixed(0).padStart(6)} CPU-s`);
  console.log(`  the ${TOP} test files whose children cost the most:`);
  const byFile = [
    ...group(
      mine.filter((line) => line.kind !== "mocha"),
      (line) => line.file,
    ),
  ]
    .map(([name, list]) => ({ name, list, cpu: sum(list) }))
    .sort((a, b) => b.cpu - a.cpu)
    .slice(0, TOP);
  for (const { name, list, cpu: seconds } of byFile) {
    const kinds = [...group(list, (line) => line.kind)].map(([kind, of]) => `${of.length} ${kind}`).join(", ");
    console.log(`    ${seconds.toFixed(0).padStart(6)} CPU-s  ${name} (${kinds})`);
  }
}

function group<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}

function sum(list: Line[]): number {
  return list.reduce((total, line) => total + line.cpuSeconds, 0);
}
