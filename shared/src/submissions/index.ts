/** The submissions layer of @intake/shared, imported as '@intake/shared/submissions' (see .dependency-cruiser.cjs for what it may import). */
export * from './store';
