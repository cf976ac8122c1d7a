/**
 * Revealed collections' CARs (GET …/metadata.car), kept by root CID: a revealed collection's
 * documents never change, so a CAR built once is the answer to every later request (up to
 * MAX_BYTES in all, least recently asked dropped first). One is built at a time in the process:
 * requests for the CAR being built wait for it, those for another are 429 RATE_LIMITED with
 * Retry-After. A build takes the CPU for seconds (10,000 documents); two at once would only take
 * longer each, and a crowd of them would hold the service.
 */
import { LRUCache } from "lru-cache";
import { ApiError } from "../http/errors";
import { buildCar, type BuiltCar } from "./car";

/** What a CAR holds: files `1.json … count.json`, each `document(n)`. */
export interface CarFiles {
  count: number;
  document(tokenId: number): Uint8Array;
}

/** The most bytes of CARs kept: a 10,000-token collection of 4 kB documents is about 41 MB. */
const MAX_BYTES = 256 * 1024 * 1024;
/** What a refused request is told to wait: about one 10,000-token build. */
const RETRY_AFTER_SECONDS = 5;

export class CarCache {
  private readonly built = new LRUCache<string, Buffer>({
    maxSize: MAX_BYTES,
    sizeCalculation: (bytes) => Math.max(1, bytes.length),
  });
  private building: { key: string; done: Promise<BuiltCar> } | undefined;

  /** The CAR whose root is `root`, if it was built. */
  find(root: string): Buffer | undefined {
    return this.built.get(root);
  }

  /**
   * The CAR of `key` (a collection on a chain), built from what `files` loads (the number of files
   * and each one's bytes); joins a build of the same key under way, which loads nothing more;
   * 429 RATE_LIMITED while another is built.
   */
  build(key: string, files: () => Promise<CarFiles>): Promise<BuiltCar> {
    if (this.building) {
      if (this.building.key === key) return this.building.done;
      throw new ApiError("RATE_LIMITED", "Another collection's CAR is being built; retry in a few seconds", undefined, {
        "Retry-After": String(RETRY_AFTER_SECONDS),
      });
    }
    const done = files()
      .then(({ count, document }) => buildCar(count, document))
      .then((car) => {
        this.built.set(car.root, car.bytes);
        return car;
      });
    const building = { key, done };
    this.building = building;
    const clear = () => {
      if (this.building === building) this.building = undefined;
    };
    done.then(clear, clear);
    return done;
  }
}
