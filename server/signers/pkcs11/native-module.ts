import { realpathSync } from "node:fs";
import type * as Pkcs11Js from "pkcs11js";
import { Pkcs11SignerError, returnValueOf } from "./errors";

/** pkcs11js' namespace: the PKCS11 class and the CK* constants. */
export type Pkcs11Js = typeof Pkcs11Js;

let binding: Promise<Pkcs11Js> | undefined;

/**
 * Loads the pkcs11js addon on first use, so that a service without PKCS#11 wallets runs even where
 * the addon was not built (it is an optional dependency: a machine without a C++ toolchain skips it).
 */
export function loadPkcs11js(): Promise<Pkcs11Js> {
  binding ??= import("pkcs11js").catch((err: unknown) => {
    binding = undefined;
    const why = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw new Pkcs11SignerError(
      "MODULE_UNAVAILABLE",
      `PKCS#11 support needs the pkcs11js native addon, which did not load (${why}); ` +
        "build it with 'npm rebuild pkcs11js' (needs python3, make and g++)",
    );
  });
  return binding;
}

/** One PKCS#11 module (shared library) loaded and initialized in this process. */
export interface LoadedModule {
  /** The path as its user gave it (for messages). */
  readonly path: string;
  /** The library's real path: one library reached by two paths (a symlink) is one module to the loader. */
  readonly realPath: string;
  readonly lib: Pkcs11Js;
  readonly pkcs11: Pkcs11Js.PKCS11;
}

interface Entry {
  module: LoadedModule;
  users: number;
}

// C_Initialize and C_Finalize act on the whole process: every token opened on one module shares
// one initialization, and the last one to close finalizes it.
const loadedModules = new Map<string, Promise<Entry>>();

export async function acquireModule(modulePath: string): Promise<LoadedModule> {
  const path = realPath(modulePath);
  for (;;) {
    let pending = loadedModules.get(path);
    if (!pending) {
      const started = initialize(modulePath, path);
      pending = started;
      loadedModules.set(path, started);
      started.catch(() => {
        if (loadedModules.get(path) === started) loadedModules.delete(path);
      });
    }
    const entry = await pending;
    // Finalized by its last user while this one waited: initialize it again.
    if (loadedModules.get(path) !== pending) continue;
    entry.users += 1;
    return { ...entry.module, path: modulePath };
  }
}

export async function releaseModule(module: LoadedModule): Promise<void> {
  const pending = loadedModules.get(module.realPath);
  if (!pending) return;
  const entry = await pending;
  entry.users -= 1;
  if (entry.users > 0) return;
  loadedModules.delete(module.realPath);
  try {
    module.pkcs11.C_Finalize();
  } finally {
    module.pkcs11.close();
  }
}

async function initialize(path: string, resolved: string): Promise<Entry> {
  const lib = await loadPkcs11js();
  const pkcs11 = new lib.PKCS11();
  try {
    pkcs11.load(path);
  } catch (err) {
    throw new Pkcs11SignerError(
      "MODULE_UNAVAILABLE",
      `cannot load the PKCS#11 module ${JSON.stringify(path)}: ${firstLine(err)}`,
    );
  }
  try {
    // The signer uses several sessions from libuv's worker threads: let the module lock for itself.
    pkcs11.C_Initialize({ flags: lib.CKF_OS_LOCKING_OK });
  } catch (err) {
    pkcs11.close();
    throw new Pkcs11SignerError(
      "MODULE_UNAVAILABLE",
      `the PKCS#11 module ${JSON.stringify(path)} failed to initialize`,
      returnValueOf(err),
    );
  }
  return { module: { path, realPath: resolved, lib, pkcs11 }, users: 0 };
}

function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path; // a bare library name, found by the loader's search path, or nothing at all (load says so)
  }
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split("\n")[0];
}
