import { expect } from "chai";
import { HashScheduler, defaultHashSchedulerLimits, type HashLane } from "../../server/users";

/** A task that runs until released by hand, recording when it started. */
function gate(started: string[], name: string) {
  let release!: () => void;
  const done = new Promise<void>((resolve) => (release = resolve));
  return { task: async () => (started.push(name), done.then(() => name)), release };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("HashScheduler (password hashing slots)", function () {
  it("keeps one slot free of batches by default, with at least two and at most four slots", function () {
    expect(defaultHashSchedulerLimits(1)).to.deep.equal({ slots: 2, batchSlots: 1 });
    expect(defaultHashSchedulerLimits(2)).to.deep.equal({ slots: 2, batchSlots: 1 });
    expect(defaultHashSchedulerLimits(16)).to.deep.equal({ slots: 4, batchSlots: 3 });
  });

  it("runs batch hashes at most batchSlots at a time, so a login starts at once beside a thousand of them", async function () {
    const scheduler = new HashScheduler({ slots: 2, batchSlots: 1 });
    const started: string[] = [];
    const batch = Array.from({ length: 1000 }, (_, i) => gate(started, `batch-${i}`));
    const batchDone = batch.map((g) => scheduler.run("batch", g.task));
    await tick();
    expect(started).to.deep.equal(["batch-0"]);

    const login = gate(started, "login");
    const loginDone = scheduler.run("login", login.task);
    await tick();
    expect(started).to.deep.equal(["batch-0", "login"]);
    expect(scheduler.queued).to.deep.equal({ login: 0, account: 0, batch: 999 });
    login.release();
    expect(await loginDone).to.equal("login");

    for (const g of batch) g.release();
    expect(await Promise.all(batchDone)).to.have.length(1000);
    expect(started).to.have.length(1001);
  });

  it("gives a freed slot to waiting logins first, then single-account writes, then batches", async function () {
    const scheduler = new HashScheduler({ slots: 1, batchSlots: 1 });
    const started: string[] = [];
    const first = gate(started, "first");
    const running = scheduler.run("batch", first.task);
    const queued: [HashLane, string][] = [
      ["batch", "batch"],
      ["account", "account"],
      ["login", "login-1"],
      ["login", "login-2"],
    ];
    const gates = new Map(queued.map(([lane, name]) => [name, { lane, ...gate(started, name) }]));
    const results = [...gates.values()].map((g) => scheduler.run(g.lane, g.task));
    await tick();
    first.release();
    await running;
    for (const name of ["login-1", "login-2", "account", "batch"]) {
      await tick();
      expect(started[started.length - 1]).to.equal(name);
      gates.get(name)!.release();
    }
    expect(await Promise.all(results)).to.deep.equal(["batch", "account", "login-1", "login-2"]);
  });

  it("drops hashes still waiting when their signal aborts, and lets the running one finish", async function () {
    const scheduler = new HashScheduler({ slots: 1, batchSlots: 1 });
    const started: string[] = [];
    const client = new AbortController();
    const gates = [0, 1, 2].map((i) => gate(started, `b${i}`));
    const results = gates.map((g) => scheduler.run("batch", g.task, client.signal).catch((err: Error) => err.message));
    await tick();
    client.abort(new Error("client closed the request"));
    gates[0].release();
    expect(await Promise.all(results)).to.deep.equal(["b0", "client closed the request", "client closed the request"]);
    expect(started).to.deep.equal(["b0"]);
    expect(scheduler.queued.batch).to.equal(0);
    expect(await scheduler.run("batch", async () => "after")).to.equal("after");
  });
});
