// Package layering holds the test that keeps the package layers pointing
// one way (docs/architecture.md has the map): low-level libraries and
// keys, then topology, then the plugins (providers, engines, placement,
// each with its kit), then the plugin registry type, then the service,
// then the HTTP server, then the composition root and the commands. The
// test harnesses under testenv are imported by tests only.
package layering
