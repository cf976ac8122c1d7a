import { NonceManager, type Signer, type TransactionRequest, type TransactionResponse } from "ethers";
import { isNonceConflict } from "./chain-errors";

const MAX_NONCE_RETRIES = 3;

/**
 * Serialises nonce assignment and broadcast for one address. ethers' NonceManager hands out the
 * nonces; the queue makes sure a send finishes (accepted or refused) before the next nonce is
 * given, so a refused send never leaves later transactions stuck behind a gap. After any failed
 * send the manager is reset, so the next nonce is read again from the chain's pending count.
 */
export class NonceQueue {
  private readonly manager: NonceManager;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly signer: Signer) {
    this.manager = new NonceManager(signer);
  }

  send(tx: TransactionRequest): Promise<TransactionResponse> {
    const run = this.tail.then(() => this.sendNow(tx));
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async sendNow(tx: TransactionRequest): Promise<TransactionResponse> {
    for (let attempt = 1; ; attempt++) {
      try {
        // NonceManager.sendTransaction would also re-read the nonce while populating; take it here.
        const nonce = await this.manager.getNonce("pending");
        const sent = await this.signer.sendTransaction({ ...tx, nonce });
        this.manager.increment();
        return sent;
      } catch (err) {
        this.manager.reset();
        // Someone else used this key, or the chain was reset: resync from the pending count and retry.
        if (!isNonceConflict(err) || attempt >= MAX_NONCE_RETRIES) throw err;
      }
    }
  }
}
