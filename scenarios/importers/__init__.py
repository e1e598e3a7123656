"""Importers: public benchmarks and client mcpServers files as proctor suites, one module per format."""
