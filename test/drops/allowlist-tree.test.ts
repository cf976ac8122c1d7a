import { expect } from "chai";
import { StandardMerkleTree } from "@openzeppelin/merkle-tree";
import { getAddress, hexlify, randomBytes } from "ethers";
import { buildAllowlistTree, LEAF_TYPES, proofIndices, type AllowlistEntry } from "../../server/drops/allowlist-tree";
import { AllowlistTreePool, defaultTreePoolLimits } from "../../server/drops/allowlist-tree-thread";
import { ApiError } from "../../server/http/errors";

const entriesOf = (n: number): AllowlistEntry[] =>
  Array.from({ length: n }, (_, i) => ({
    address: getAddress(hexlify(randomBytes(20))),
    allowance: BigInt(1 + (i % 7)),
    price: BigInt(i % 3) * 10n ** 15n,
  }));

/** The node at `index` of a tree's concatenated nodes, as hex. */
const nodeAt = (nodes: Buffer, index: number) => hexlify(nodes.subarray(index * 32, index * 32 + 32));

describe("Allowlist trees: the tree StandardMerkleTree builds, node for node", function () {
  for (const size of [1, 2, 3, 100, 1_001]) {
    it(`${size} entries: the same root, and each entry's stored proof is the library's`, function () {
      const entries = entriesOf(size);
      const values = entries.map((e) => [e.address, e.allowance.toString(), e.price.toString()]);
      const reference = StandardMerkleTree.of(values, [...LEAF_TYPES]);
      const tree = buildAllowlistTree(entries);
      expect(tree.root).to.equal(reference.root);
      expect(tree.nodes.length).to.equal((2 * size - 1) * 32);
      for (let i = 0; i < size; i += Math.max(1, Math.floor(size / 50))) {
        const proof = proofIndices(tree.treeIndex[i]).map((index) => nodeAt(tree.nodes, index));
        expect(proof).to.deep.equal(reference.getProof(i));
      }
    });
  }

  it("off the main thread (a pool worker, from 5,000 entries) the tree is the same", async function () {
    this.timeout(300_000);
    const pool = new AllowlistTreePool({ workers: 1, queue: 1 });
    try {
      const entries = entriesOf(6_000);
      const [inPlace, offThread] = [buildAllowlistTree(entries), await pool.build(entries)];
      expect(offThread.root).to.equal(inPlace.root);
      expect(offThread.treeIndex).to.deep.equal(inPlace.treeIndex);
      expect(offThread.nodes.equals(inPlace.nodes)).to.equal(true);
    } finally {
      await pool.close();
    }
  });

  it("the pool runs one worker per core at most, queues a bounded number, and refuses one more with 503 SERVICE_BUSY and Retry-After", async function () {
    this.timeout(300_000);
    expect(defaultTreePoolLimits(2)).to.deep.equal({ workers: 2, queue: 4 });
    const pool = new AllowlistTreePool({ workers: 2, queue: 1 });
    try {
      const lists = [0, 1, 2, 3].map(() => entriesOf(6_000));
      const builds = lists.slice(0, 3).map((list) => pool.build(list));
      expect(pool.size).to.equal(2);
      expect(pool.queued).to.equal(1);
      const refused = await pool.build(lists[3]).then(
        () => null,
        (err: unknown) => err,
      );
      expect(refused).to.be.instanceOf(ApiError);
      expect(refused).to.include({ code: "SERVICE_BUSY", status: 503 });
      expect((refused as ApiError).headers).to.deep.equal({ "Retry-After": "5" });
      const trees = await Promise.all(builds);
      trees.forEach((tree, i) => expect(tree.root).to.equal(buildAllowlistTree(lists[i]).root));
      expect(pool.size).to.equal(2); // reused: the third build ran on a worker of the first two
      expect((await pool.build(lists[3])).root).to.equal(buildAllowlistTree(lists[3]).root);
    } finally {
      await pool.close();
    }
  });
});
