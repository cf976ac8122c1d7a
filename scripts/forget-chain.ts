/** `npm run store:forget-chain`: see server/runtime/forget-chain-command.ts and the README. */
import { runForgetChainCommand } from "../server/runtime/forget-chain-command";

runForgetChainCommand();
