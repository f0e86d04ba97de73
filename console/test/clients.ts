import { factories } from '@intake/shared/testing';
import type { OwnerConsole } from './owner';

/** A client's project, Acme Dental, with a form named Booking in it, of the console's account. */
export async function acmeBooking(c: OwnerConsole) {
  const { db } = c.stack.platform;
  const acme = await factories.project(db, c.account.id, 'Acme Dental');
  const booking = await factories.form(db, c.account.id, { name: 'Booking', project_id: acme.id });
  return { db, acme, booking };
}
