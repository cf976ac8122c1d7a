/**
 * The provenance of a collection's documents (API.md, "Metadata"), as anyone recomputes it from
 * the served files: keccak256(concat(keccak256(document 1), …, keccak256(document count))), each
 * document in its canonical bytes; and which document a token shows after the reveal.
 */
import { concat, keccak256, toUtf8Bytes } from "ethers";

/** The provenance hash of `documents` (canonical JSON text), ids 1..count in order. */
export function provenanceOf(documents: readonly string[]): string {
  return keccak256(concat(documents.map((document) => keccak256(toUtf8Bytes(document)))));
}

/** The uploaded document token `tokenId` shows after the reveal: ((t - 1 + startingIndex) mod count) + 1. */
export function revealedDocumentId(tokenId: bigint, startingIndex: bigint, count: bigint): bigint {
  return ((tokenId - 1n + startingIndex) % count) + 1n;
}
