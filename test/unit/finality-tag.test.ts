import { expect } from "chai";
import { FinalityTag } from "../../server/engine/finality-tag";

/** A node's `finalized` answers, counted: `answer(head)` is what it says at that head. */
function node(answer: (head: number) => number | null) {
  const asked: number[] = [];
  return {
    asked,
    at: (head: number) => async () => {
      asked.push(head);
      return answer(head);
    },
  };
}

describe("FinalityTag: the node's finalized block, asked only when it may help", function () {
  it("a node that answers its head has no tag: FINALITY_BLOCKS deep counts, and it is asked once", async function () {
    const tag = new FinalityTag(64);
    const hardhat = node((head) => head);
    expect(await tag.height(100, 90, hardhat.at(100))).to.equal(36);
    expect(await tag.height(101, 90, hardhat.at(101))).to.equal(37);
    expect(hardhat.asked).to.deep.equal([100]);
  });

  it("a node 64 blocks behind is asked again only once the lowest block may be that deep", async function () {
    const tag = new FinalityTag(64);
    const anvil = node((head) => head - 64);
    expect(await tag.height(200, 190, anvil.at(200))).to.equal(136);
    for (let head = 201; head < 254; head++) expect(await tag.height(head, 190, anvil.at(head))).to.equal(136);
    expect(await tag.height(254, 190, anvil.at(254))).to.equal(190);
    expect(anvil.asked).to.deep.equal([200, 254]);
  });

  it("genesis as finalized (a chain younger than its lag) teaches no lag: asked at each head", async function () {
    const tag = new FinalityTag(64);
    const young = node(() => 0);
    for (const head of [10, 11, 12]) expect(await tag.height(head, 5, young.at(head))).to.equal(0);
    expect(young.asked).to.deep.equal([10, 11, 12]);
  });

  it("nothing mined: not asked; a failed ask keeps the last answer", async function () {
    const tag = new FinalityTag(64);
    const flaky = node((head) => head - 64);
    expect(await tag.height(100, undefined, flaky.at(100))).to.equal(36);
    expect(flaky.asked).to.deep.equal([]);
    expect(await tag.height(100, 30, flaky.at(100))).to.equal(36);
    const failing = async () => {
      throw new Error("no answer");
    };
    expect(await tag.height(200, 100, failing)).to.equal(36);
  });
});
