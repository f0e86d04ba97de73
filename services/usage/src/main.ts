import '@intake/shared/register';
import { runStandalone } from '@intake/shared/runtime';
import { usageService } from './index';

runStandalone(usageService).catch((err) => {
  console.error(err);
  process.exit(1);
});
