/**
 * The IPFS package of a revealed collection (API.md, "Metadata"): a CAR v1 whose root is one UnixFS
 * directory of `1.json … count.json`, built with ipfs-unixfs-importer and written with @ipld/car.
 * It is built whole in memory (a CAR v1 names its root before its blocks, and the root is known
 * last), then kept by root CID (car-cache.ts). The importer's work is promises that settle one
 * another with no I/O between them: the build gives the event loop a turn every few files and
 * blocks, so that the service answers other requests while it runs.
 *
 * The UnixFS settings, so that any tool given them finds the same root CID (they are those of the
 * IPIP-499 profile `unixfs-v1-2025`, written out):
 * - CIDv1, SHA-256 multihash; files' leaves are raw blocks (codec raw, 0x55), nodes dag-pb;
 * - files chunked at a fixed 1 MiB (a document is at most 16 kB: each file is one raw block);
 * - balanced layout, at most 1,024 links a node; a file of one block is that block;
 * - the directory is wrapped (`wrapWithDirectory`), its entries in token order; it becomes a HAMT
 *   (fan-out 256, 8 bits, murmur3) when its serialized block would pass 256 KiB (`block-bytes`):
 *   from about 4,000 tokens on, so a 10,000-token collection's root is a sharded directory.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

/** The importer's options, as documented above. */
export const UNIXFS_SETTINGS = {
  cidVersion: 1,
  rawLeaves: true,
  reduceSingleLeafToSelf: true,
  chunkSizeBytes: 1_048_576,
  maxChildrenPerNode: 1_024,
  wrapWithDirectory: true,
  shardSplitThresholdBytes: 262_144,
  shardSplitStrategy: "block-bytes",
  shardFanoutBits: 8,
} as const;

// ESM-only packages, loaded from this CommonJS build at run time (TypeScript would turn import() into require()).
const importEsm = new Function("specifier", "return import(specifier)") as (specifier: string) => Promise<unknown>;

/** What this module uses of a CID. */
export interface Cid {
  toString(): string;
}
interface Block {
  cid: Cid;
  bytes: Uint8Array;
}
interface Blockstore {
  put(cid: Cid, bytes: Uint8Array): Promise<Cid>;
}
interface ImportEntry {
  path: string;
  content: Uint8Array;
}
interface Libraries {
  importer(source: AsyncIterable<ImportEntry>, blockstore: Blockstore, options: object): AsyncIterable<{ cid: Cid }>;
  fixedSize(options: { chunkSize: number }): unknown;
  balanced(options: { maxChildrenPerNode: number }): unknown;
  CarWriter: {
    create(roots: Cid[]): {
      writer: { put(block: Block): Promise<void>; close(): Promise<void> };
      out: AsyncIterable<Uint8Array>;
    };
  };
}

let libraries: Promise<Libraries> | undefined;

function load(): Promise<Libraries> {
  libraries ??= Promise.all([
    importEsm("ipfs-unixfs-importer"),
    importEsm("ipfs-unixfs-importer/chunker"),
    importEsm("ipfs-unixfs-importer/layout"),
    importEsm("@ipld/car"),
  ]).then(([importer, chunker, layout, car]) => ({
    importer: (importer as Pick<Libraries, "importer">).importer,
    fixedSize: (chunker as Pick<Libraries, "fixedSize">).fixedSize,
    balanced: (layout as Pick<Libraries, "balanced">).balanced,
    CarWriter: (car as Pick<Libraries, "CarWriter">).CarWriter,
  }));
  return libraries;
}

/** The importer's options object for UNIXFS_SETTINGS. */
export async function importerOptions(): Promise<object> {
  const { fixedSize, balanced } = await load();
  const s = UNIXFS_SETTINGS;
  return {
    cidVersion: s.cidVersion,
    rawLeaves: s.rawLeaves,
    reduceSingleLeafToSelf: s.reduceSingleLeafToSelf,
    chunker: fixedSize({ chunkSize: s.chunkSizeBytes }),
    layout: balanced({ maxChildrenPerNode: s.maxChildrenPerNode }),
    wrapWithDirectory: s.wrapWithDirectory,
    shardSplitThresholdBytes: s.shardSplitThresholdBytes,
    shardSplitStrategy: s.shardSplitStrategy,
    shardFanoutBits: s.shardFanoutBits,
  };
}

/** How many files or blocks the build handles between two turns of the event loop. */
const PER_TURN = 32;

/** The files of the directory: `n.json` for n = 1..count, each `document(n)`'s bytes. */
async function* files(count: number, document: (tokenId: number) => Uint8Array): AsyncIterable<ImportEntry> {
  for (let n = 1; n <= count; n++) {
    if (n % PER_TURN === 0) await nextTurn();
    yield { path: `${n}.json`, content: document(n) };
  }
}

/** Imports the files into `blockstore`; answers the directory's CID (the last entry the importer yields). */
async function importAll(
  count: number,
  document: (tokenId: number) => Uint8Array,
  blockstore: Blockstore,
): Promise<Cid> {
  const { importer } = await load();
  let root: Cid | undefined;
  for await (const entry of importer(files(count, document), blockstore, await importerOptions())) root = entry.cid;
  if (!root) throw new Error("nothing imported");
  return root;
}

/** A built CAR: its root CID and its bytes. */
export interface BuiltCar {
  root: string;
  bytes: Buffer;
}

/** The CAR of the directory, whole: each block once (two identical documents make one block). */
export async function buildCar(count: number, document: (tokenId: number) => Uint8Array): Promise<BuiltCar> {
  const { CarWriter } = await load();
  const blocks: Block[] = [];
  const seen = new Set<string>();
  const blockstore: Blockstore = {
    async put(cid, bytes) {
      const key = cid.toString();
      if (!seen.has(key)) {
        seen.add(key);
        blocks.push({ cid, bytes });
        if (blocks.length % PER_TURN === 0) await nextTurn();
      }
      return cid;
    },
  };
  const root = await importAll(count, document, blockstore);
  const { writer, out } = CarWriter.create([root]);
  const chunks: Uint8Array[] = [];
  const read = (async () => {
    for await (const chunk of out) chunks.push(chunk);
  })();
  for (let n = 0; n < blocks.length; n++) {
    await writer.put(blocks[n]);
    if (n % PER_TURN === 0) await nextTurn();
  }
  await writer.close();
  await read;
  return { root: root.toString(), bytes: Buffer.concat(chunks) };
}
