// Scaffolding: tests of the elementwise oracles (being written).
