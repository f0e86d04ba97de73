import '@intake/shared/register';
import { runStandalone } from '@intake/shared/runtime';
import { deliveryService } from './index';

runStandalone(deliveryService).catch((err) => {
  console.error(err);
  process.exit(1);
});
