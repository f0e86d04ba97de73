/** The contracts layer of @intake/shared, imported as '@intake/shared/contracts' (see .dependency-cruiser.cjs for what it may import). */
export * from './emails';
export * from './events';
export * from './forms';
export * from './notifications';
export * from './problems';
export * from './spam';
export * from './time';
export * from './ids';
