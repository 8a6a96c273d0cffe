// Scaffolding: tests of the normalization oracles (being written).
