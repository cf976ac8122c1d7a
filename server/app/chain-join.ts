/**
 * The store bound to each chain at start, and a chain that does not answer then joining later
 * (API.md "Chains"). A chain whose entry gives its id never stops the start: while none of its
 * URLs answers it is down, its traffic held (writes 503 CHAIN_UNAVAILABLE, the store's reads
 * answer), and it joins once a URL answers its id and the store's check of its blocks passes.
 * RPC_URL's chain (its id unknown) has waited for an answer already; a transient failure of the
 * check is asked again with backoff until CHAIN_START_TIMEOUT_MS.
 */
import { bindStoreToChain, ChainMismatchError, type ChainDataCleared } from "../chain/store-binding";
import { isUnanswered } from "../chain/unanswered";
import type { SqlDriver } from "../db";
import type { Logger } from "../http/logger";
import type { ReachedChain } from "./chain-unit";

const FIRST_PAUSE_MS = 500;
/** A chain down at start is asked again at least this often. */
const MAX_PAUSE_MS = 5_000;

/** What binding a chain at start did: `joined` false = the chain is down and held, for joinWhenAnswering. */
export interface StartBinding {
  joined: boolean;
  cleared?: ChainDataCleared;
}

/**
 * Binds the store to `chain` (checks its blocks against those the store has seen, or clears them
 * when `fresh`), before anything reads the store about it. A chain with its id configured whose
 * URLs do not answer is held instead; any other failure to answer is asked again until `deadline`.
 */
export async function bindAtStart(
  db: SqlDriver,
  chain: ReachedChain,
  fresh: boolean,
  deadline: number,
): Promise<StartBinding> {
  const id = chain.chainId.toString();
  const { gate } = chain;
  const idKnown = chain.spec.id !== undefined;
  if (gate && idKnown && !gate.answered) {
    gate.hold();
    return { joined: false };
  }
  for (let pause = FIRST_PAUSE_MS; ; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
    try {
      return { joined: true, cleared: await bindStoreToChain(db, chain.client.rpc, id, fresh) };
    } catch (err) {
      if (!gate || !isUnanswered(err)) throw err;
      if (idKnown) {
        gate.hold();
        return { joined: false };
      }
      if (Date.now() + pause > deadline) throw err;
    }
    await sleep(pause);
  }
}

/**
 * Asks a held chain's URLs with backoff until one answers its id, then checks its blocks against
 * the store's and lets its traffic through. A chain that is not the one the store knows stays held
 * and is named in the log (once per reason). Answers a function that stops asking.
 */
export function joinWhenAnswering(db: SqlDriver, chain: ReachedChain, logger: Logger): () => Promise<void> {
  const gate = chain.gate!;
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let wake: () => void = () => {};
  let said = "";
  logger.warn("no RPC URL of the chain answers: it is down (writes answer 503) until one does");
  const run = (async () => {
    for (let pause = FIRST_PAUSE_MS; !stopped; pause = Math.min(pause * 2, MAX_PAUSE_MS)) {
      try {
        if (await gate.reach()) {
          await bindStoreToChain(db, gate.rpc, chain.chainId.toString(), false);
          gate.release();
          logger.info("the chain answers: joined");
          return;
        }
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        // A chain answering another id or lacking the store's blocks: named, and asked again (an operator may fix it).
        if (!isUnanswered(err) && message !== said) {
          said = message;
          logger.error(
            { err: message },
            err instanceof ChainMismatchError ? "the chain is not the store's" : "joining failed",
          );
        }
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, pause);
      });
    }
  })();
  return async () => {
    stopped = true;
    clearTimeout(timer);
    wake();
    await run;
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
