# podadmctl and the example plugins (cmd/). Included by the top-level
# Makefile, whose BIN, STAMPS and FORCE it uses.
#
#   make podadmctl   _output/bin/podadmctl
#   make plugins     _output/bin/pod-security-plugin, pod-security-plugin-grpc
#                    and netpol-gate-plugin
#   make cmd         podadmctl and the plugins
#
# Static, stripped, stamped with the kubelet's version (build/version.sh), so
# `podadmctl version` names the release it belongs to. go build decides what
# is out of date; the rules always run it.

CMD_PLUGINS := pod-security-plugin pod-security-plugin-grpc netpol-gate-plugin
CMD_BINARIES := podadmctl $(CMD_PLUGINS)

$(addprefix $(BIN)/,$(CMD_BINARIES)): $(BIN)/%: $(STAMPS)/version FORCE
	@mkdir -p $(BIN)
	CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $$(cat $(STAMPS)/version)" -o $@ ./cmd/$*

.PHONY: podadmctl
podadmctl: $(BIN)/podadmctl ## Build podadmctl (validate a plugin configuration, dry-run a pod).

.PHONY: plugins
plugins: $(addprefix $(BIN)/,$(CMD_PLUGINS)) ## Build the example plugins: pod-security-plugin (Exec), pod-security-plugin-grpc and netpol-gate-plugin (GRPC).

.PHONY: cmd
cmd: podadmctl plugins ## Build podadmctl and the example plugins.
