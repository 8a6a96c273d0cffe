// Scaffolding: tests of the reductions oracles (being written).
