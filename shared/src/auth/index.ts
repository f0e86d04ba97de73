/** The auth layer of @intake/shared, imported as '@intake/shared/auth' (see .dependency-cruiser.cjs for what it may import). */
export * from './api-keys';
export * from './roles';
export * from './sessions';
export * from './projects';
