import { expect } from "chai";
import hre from "hardhat";
import { nextPollDelay, steadyInterval } from "../../server/chain/block-timing";
import { bloomMayHold } from "../../server/chain/log-bloom";

describe("block timing (when the block feed polls without a subscription)", () => {
  const every = (ms: number, n: number, start = 10_000) => Array.from({ length: n }, (_, i) => start + i * ms);

  it("finds a steady interval only from enough heads that came at one pace", () => {
    expect(steadyInterval(every(1000, 3))).to.equal(undefined); // too few
    expect(steadyInterval(every(1000, 6))).to.equal(1000);
    expect(steadyInterval([0, 1000, 2050, 2990, 4000])).to.be.within(990, 1050);
    // A dev chain that mines on demand: no pace.
    expect(steadyInterval([0, 100, 5000, 5100, 20_000])).to.equal(undefined);
  });

  it("waits until the next block is due, then polls quickly; polls every BLOCK_POLL_MS without a pace", () => {
    const arrivals = every(12_000, 6);
    const last = arrivals[arrivals.length - 1];
    const quick = 500; // 12 s / 20, capped at BLOCK_POLL_MS
    expect(nextPollDelay(arrivals, last, 500)).to.equal(12_000 - quick);
    expect(nextPollDelay(arrivals, last + 11_600, 500)).to.equal(quick);
    const second = every(1000, 6);
    expect(nextPollDelay(second, second[5] + 10, 500)).to.equal(1000 - 50 - 10);
    expect(nextPollDelay(second, second[5] + 990, 500)).to.equal(50);
    // Two intervals without a block: the pace is no longer trusted.
    expect(nextPollDelay(second, second[5] + 2500, 500)).to.equal(500);
    // A chain faster than BLOCK_POLL_MS, or one with no pace: BLOCK_POLL_MS.
    expect(nextPollDelay(every(250, 6), 11_260, 500)).to.equal(500);
    expect(nextPollDelay([0, 100, 5000, 5100, 20_000], 20_010, 500)).to.equal(500);
  });
});

describe("log blooms (the index skips blocks that hold none of its collections' logs)", () => {
  it("a block's bloom holds the address of every contract that logged in it, and not another's", async () => {
    const [owner] = await hre.ethers.getSigners();
    const token = await hre.ethers.deployContract("NFTCollection", ["B", "B", "ipfs://x/", 0n, 100n, 10n]);
    await token.waitForDeployment();
    const tx = await token.mint(2n);
    const receipt = await tx.wait();
    const block = (await hre.network.provider.request({
      method: "eth_getBlockByNumber",
      params: [`0x${receipt!.blockNumber.toString(16)}`, false],
    })) as { logsBloom: string };
    expect(bloomMayHold(block.logsBloom, await token.getAddress())).to.equal(true);
    expect(bloomMayHold(block.logsBloom, (await token.getAddress()).toLowerCase())).to.equal(true);
    // Other addresses: 3 bits of 2048 each, so a block with a few logs leaves nearly all of them out.
    const others = Array.from({ length: 20 }, (_, i) =>
      hre.ethers.getCreateAddress({ from: owner.address, nonce: 1000 + i }),
    );
    expect(others.filter((a) => bloomMayHold(block.logsBloom, a)).length).to.be.below(2);
    const empty = `0x${"0".repeat(512)}`;
    expect(bloomMayHold(empty, await token.getAddress())).to.equal(false);
  });
});
