// Scaffolding: tests of the linalg oracles (being written).
