# Build and install regcoded as a systemd service.
#   make install                     build release, install under /usr/local and /etc
#   make install DESTDIR=/tmp/stage  stage the same tree elsewhere (packaging)
#   make install NO_BUILD=1 CONFIGURATION=debug   install already built binaries

PREFIX        ?= /usr/local
BINDIR        ?= $(PREFIX)/bin
SYSCONFDIR    ?= /etc
UNITDIR       ?= $(SYSCONFDIR)/systemd/system
SYSUSERSDIR   ?= /usr/lib/sysusers.d
TMPFILESDIR   ?= /usr/lib/tmpfiles.d
CONFIGURATION ?= release
SWIFT         ?= swift
DESTDIR       ?=

BUILD_BIN = $(shell $(SWIFT) build -c $(CONFIGURATION) --show-bin-path 2>/dev/null || echo .build/$(CONFIGURATION))
BINARIES  = regcoded regcodectl pass-sim

.PHONY: all build install uninstall test

all: build

build:
ifndef NO_BUILD
	$(SWIFT) build -c $(CONFIGURATION) --product regcoded
	$(SWIFT) build -c $(CONFIGURATION) --product regcodectl
	$(SWIFT) build -c $(CONFIGURATION) --product pass-sim
endif

install: build
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(UNITDIR) $(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(TMPFILESDIR)
	for binary in $(BINARIES); do install -m 0755 $(BUILD_BIN)/$$binary $(DESTDIR)$(BINDIR)/$$binary; done
	sed 's|/usr/local/bin/regcoded|$(BINDIR)/regcoded|' systemd/regcoded.service > $(DESTDIR)$(UNITDIR)/regcoded.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/regcoded.service
	install -m 0644 systemd/regcoded.socket $(DESTDIR)$(UNITDIR)/regcoded.socket
	# Template units for several shards on one host: regcoded@0-3.service runs shard 0 of 3.
	sed 's|/usr/local/bin/regcoded|$(BINDIR)/regcoded|' systemd/regcoded@.service > $(DESTDIR)$(UNITDIR)/regcoded@.service
	chmod 0644 $(DESTDIR)$(UNITDIR)/regcoded@.service
	install -m 0644 systemd/regcoded@.socket $(DESTDIR)$(UNITDIR)/regcoded@.socket
	install -m 0644 systemd/regcoded.sysusers $(DESTDIR)$(SYSUSERSDIR)/regcoded.conf
	install -m 0644 systemd/regcoded.tmpfiles $(DESTDIR)$(TMPFILESDIR)/regcoded.conf
	install -d -m 0755 $(DESTDIR)$(SYSCONFDIR)/regcoded
	install -d -m 0700 $(DESTDIR)$(SYSCONFDIR)/regcoded/credentials
	# Never overwrite an operator's configuration or secrets.
	[ -e $(DESTDIR)$(SYSCONFDIR)/regcoded/regcoded.yaml ] || \
		sed -e 's|^database:.*|# database: set by systemd ($$STATE_DIRECTORY)|' \
		    -e 's|^socket:.*|# socket: passed by regcoded.socket|' \
		    -e 's|^print_codes:.*|print_codes: false|' \
		    examples/regcoded.yaml > $(DESTDIR)$(SYSCONFDIR)/regcoded/regcoded.yaml
	[ -e $(DESTDIR)$(SYSCONFDIR)/regcoded/credentials/software-statement ] || \
		install -m 0600 systemd/lab-software-statement $(DESTDIR)$(SYSCONFDIR)/regcoded/credentials/software-statement
	@echo "Installed. Next: systemd-sysusers; systemd-tmpfiles --create; systemctl daemon-reload; systemctl enable --now regcoded.socket regcoded.service"

uninstall:
	for binary in $(BINARIES); do rm -f $(DESTDIR)$(BINDIR)/$$binary; done
	rm -f $(DESTDIR)$(UNITDIR)/regcoded.service $(DESTDIR)$(UNITDIR)/regcoded.socket
	rm -f $(DESTDIR)$(UNITDIR)/regcoded@.service $(DESTDIR)$(UNITDIR)/regcoded@.socket
	rm -f $(DESTDIR)$(SYSUSERSDIR)/regcoded.conf $(DESTDIR)$(TMPFILESDIR)/regcoded.conf

test:
	$(SWIFT) test
