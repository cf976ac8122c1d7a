/**
 * Mocha's spec reporter, which also writes how long each test file took (its top-level suites, hooks
 * included) to TEST_FILE_SECONDS as JSON, `{"test/…": seconds}`: what scripts/test-parts.ts deals the
 * files by (test/file-seconds.json). hardhat.config.ts uses it only when that variable is set.
 */
import { writeFileSync } from "node:fs";
import path from "node:path";
import Mocha from "mocha";

const ROOT = path.resolve(__dirname, "../..");

class FileSecondsReporter extends Mocha.reporters.Spec {
  constructor(runner: Mocha.Runner, options?: Mocha.MochaOptions) {
    super(runner, options);
    const seconds: Record<string, number> = {};
    const started = new Map<Mocha.Suite, number>();
    runner.on(Mocha.Runner.constants.EVENT_SUITE_BEGIN, (suite) => {
      if (suite.parent?.root && suite.file) started.set(suite, Date.now());
    });
    runner.on(Mocha.Runner.constants.EVENT_SUITE_END, (suite) => {
      const at = started.get(suite);
      if (at === undefined || !suite.file) return;
      const file = path.relative(ROOT, suite.file);
      seconds[file] = Math.round(((seconds[file] ?? 0) + (Date.now() - at) / 1000) * 10) / 10;
    });
    runner.once(Mocha.Runner.constants.EVENT_RUN_END, () => {
      const out = process.env.TEST_FILE_SECONDS;
      if (out) writeFileSync(out, `${JSON.stringify(seconds, Object.keys(seconds).sort(), 2)}\n`);
    });
  }
}

export = FileSecondsReporter;
