/** The outbox relay of a service process, on its own thread (`startBackgroundThread`, from `runStandalone`). */
import './register';
import { runBackgroundThread } from './background-thread';
import { startPlatformRelay } from './service';

runBackgroundThread(async (platform) => [startPlatformRelay(platform)]);
