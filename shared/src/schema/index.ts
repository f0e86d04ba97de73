/** The schema layer of @intake/shared, imported as '@intake/shared/schema' (see .dependency-cruiser.cjs for what it may import). */
export * from './accounts';
export * from './migrate';
export * from './notifications';
export { migrations, type Migration } from './migrations';
