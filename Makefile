# Builds and installs callwheel's C library: the header, the static library, the shared library
# with a versioned soname, and callwheel.pc for pkg-config.
#
#   make install PREFIX=$HOME/.local        # or DESTDIR=... for packaging
#   cc app.c $(pkg-config --cflags --libs callwheel)
#   cc app.c $(pkg-config --static --cflags --libs callwheel)   # the static library
#
#   make c-examples PREFIX=...   # builds examples/c/*.c through pkg-config against the
#                                # installed prefix and runs them
#
# Cargo does the build; this file only names, places and describes what it built.

PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib
INCLUDEDIR ?= $(PREFIX)/include
PCDIR      ?= $(LIBDIR)/pkgconfig
DESTDIR    ?=
CARGO      ?= cargo
CC         ?= cc

VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
MAJOR   := $(word 1,$(subst ., ,$(VERSION)))
MINOR   := $(word 2,$(subst ., ,$(VERSION)))
# Before 1.0 a minor release may break the ABI, so the soname carries the minor version too.
ifeq ($(MAJOR),0)
SOVERSION := 0.$(MINOR)
else
SOVERSION := $(MAJOR)
endif
SONAME := libcallwheel.so.$(SOVERSION)
BUILT  := target/release
# What the static library needs from the system (rustc --print native-static-libs, glibc).
PRIVATE_LIBS := -lgcc_s -lutil -lrt -lpthread -lm -ldl

.PHONY: all lib install uninstall c-examples clean-c

all: lib

# One build of both library kinds, with the soname set for the shared one.
lib:
	$(CARGO) rustc --release -p callwheel-ffi --lib --crate-type staticlib,cdylib -- \
		-C link-arg=-Wl,-soname,$(SONAME)

install: lib
	install -d "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(PCDIR)"
	install -m 644 crates/callwheel-ffi/include/callwheel.h "$(DESTDIR)$(INCLUDEDIR)/callwheel.h"
	install -m 644 $(BUILT)/libcallwheel_ffi.a "$(DESTDIR)$(LIBDIR)/libcallwheel.a"
	install -m 755 $(BUILT)/libcallwheel_ffi.so "$(DESTDIR)$(LIBDIR)/libcallwheel.so.$(VERSION)"
	ln -sf libcallwheel.so.$(VERSION) "$(DESTDIR)$(LIBDIR)/$(SONAME)"
	ln -sf $(SONAME) "$(DESTDIR)$(LIBDIR)/libcallwheel.so"
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' \
		-e 's|@VERSION@|$(VERSION)|' -e 's|@PRIVATE_LIBS@|$(PRIVATE_LIBS)|' \
		crates/callwheel-ffi/callwheel.pc.in > "$(DESTDIR)$(PCDIR)/callwheel.pc"

uninstall:
	rm -f "$(DESTDIR)$(INCLUDEDIR)/callwheel.h" "$(DESTDIR)$(LIBDIR)/libcallwheel.a" \
		"$(DESTDIR)$(LIBDIR)/libcallwheel.so.$(VERSION)" "$(DESTDIR)$(LIBDIR)/$(SONAME)" \
		"$(DESTDIR)$(LIBDIR)/libcallwheel.so" "$(DESTDIR)$(PCDIR)/callwheel.pc"

# Each example is built twice through pkg-config, against the shared and the static library,
# and each build is run (the shared one finds the library through the rpath given here).
C_EXAMPLES := quick_start event_loop
C_OUT := target/c-examples
c-examples:
	mkdir -p $(C_OUT)
	set -e; export PKG_CONFIG_PATH="$(PCDIR)$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}"; \
	for ex in $(C_EXAMPLES); do \
		$(CC) -std=c11 -Wall -Wextra -Werror -o $(C_OUT)/$$ex examples/c/$$ex.c \
			$$(pkg-config --cflags --libs callwheel) -Wl,-rpath,$(LIBDIR); \
		$(CC) -std=c11 -Wall -Wextra -Werror -o $(C_OUT)/$$ex-static \
			examples/c/$$ex.c $$(pkg-config --static --cflags callwheel) \
			$(LIBDIR)/libcallwheel.a $$(pkg-config --static --libs-only-l callwheel | \
			sed 's/-lcallwheel//'); \
		echo "== $$ex (shared)"; ./$(C_OUT)/$$ex; \
		echo "== $$ex (static)"; ./$(C_OUT)/$$ex-static; \
	done

clean-c:
	rm -rf $(C_OUT)
