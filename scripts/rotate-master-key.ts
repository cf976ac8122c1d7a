/** `npm run wallets:rotate-master-key`: see server/wallets/rotation-command.ts and the README. */
import { runRotationCommand } from "../server/wallets/rotation-command";

runRotationCommand();
