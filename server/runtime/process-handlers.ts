import type { Logger } from "../http/logger";
import { currentRequestId } from "../http/request-context";

/**
 * Signals that arrive this soon after the first count as the same request to stop: Ctrl-C in a
 * terminal reaches both `npm` and the service, and npm forwards its own copy.
 */
const REPEAT_WINDOW_MS = 1_000;

/**
 * On SIGTERM or SIGINT, runs `stop` once and exits 0 when it resolves (1 when it throws). A later
 * signal, or `stop` overrunning `hardLimitMs`, exits 1 at once.
 */
export function stopOnSignals(logger: Logger, stop: () => Promise<void>, hardLimitMs: number): void {
  let firstAt: number | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    if (firstAt !== undefined) {
      if (Date.now() - firstAt < REPEAT_WINDOW_MS) return;
      logger.warn({ signal }, "second signal while shutting down: exiting now");
      process.exit(1);
    }
    firstAt = Date.now();
    logger.info({ signal }, "shutting down: no new connections, waiting for requests in flight");
    setTimeout(() => {
      logger.error({ hardLimitMs }, "shutdown did not finish in time: exiting");
      process.exit(1);
    }, hardLimitMs).unref();
    stop().then(
      () => {
        logger.info("stopped");
        process.exit(0);
      },
      (err: unknown) => {
        logger.error({ err }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", onSignal);
  process.on("SIGINT", onSignal);
}

/**
 * Logs what would otherwise end the process silently or with a bare stack on stderr, with the id
 * of the request whose work it came from when there is one.
 * - An unhandled rejection is logged at "error" and the service keeps serving: the promise's
 *   work has already failed, nothing is left half-done by it, and the other requests in flight
 *   should not be cut for it (Node's default would exit).
 * - An uncaught exception is logged at "fatal" and the process exits 1: a throw from a callback
 *   may leave any state half-updated, and a supervisor restarts a clean process (unfinished
 *   operations are in the store).
 */
export function logProcessErrors(logger: Logger): void {
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason, requestId: currentRequestId() }, "unhandled promise rejection");
  });
  process.on("uncaughtException", (err, origin) => {
    logger.fatal({ err, origin, requestId: currentRequestId() }, "uncaught exception: exiting");
    process.exit(1);
  });
}
