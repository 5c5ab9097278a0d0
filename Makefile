# Builds and installs callwheel's C library: the header, the static library, the shared library
# with a versioned soname, and two pkg-config files.
#
#   make install PREFIX=$HOME/.local        # or DESTDIR=... for packaging
#   cc app.c $(pkg-config --cflags --libs callwheel)           # the shared library
#   cc app.c $(pkg-config --cflags --libs callwheel-static)    # libcallwheel.a linked in
#   cc -static app.c $(pkg-config --static --cflags --libs callwheel)   # nothing shared at all
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
# What the static library needs from the system: the list rustc prints for it
# (--print native-static-libs, saved by the `lib` target), less -lc and -lgcc_s, which the C
# compiler's driver adds itself (with the unwinder that fits the link: libgcc_s for a dynamic
# program, libgcc_eh for a -static one, which has no libgcc_s to find).
NATIVE_LIBS_FILE := $(BUILT)/callwheel.native-static-libs
PRIVATE_LIBS = $(filter-out -lc -lgcc_s,$(shell cat $(NATIVE_LIBS_FILE)))

.PHONY: all lib install uninstall c-examples clean-c

all: lib

# One build of both library kinds, with the soname set for the shared one. rustc prints the
# static library's system libraries only when it links: a build with nothing to do keeps the
# list saved before, and a missing list makes the library link again.
lib:
	@mkdir -p $(BUILT)
	@if [ ! -s $(NATIVE_LIBS_FILE) ]; then touch crates/callwheel-ffi/src/lib.rs; fi
	$(CARGO) rustc --release -p callwheel-ffi --lib --crate-type staticlib,cdylib -- \
		-C link-arg=-Wl,-soname,$(SONAME) --print native-static-libs 2> $(BUILT).rustc-log \
		|| { cat $(BUILT).rustc-log; exit 1; }
	@cat $(BUILT).rustc-log
	@libs=$$(sed -n 's/.*native-static-libs: //p' $(BUILT).rustc-log | tail -n 1); \
	if [ -n "$$libs" ]; then echo "$$libs" > $(NATIVE_LIBS_FILE); fi; \
	test -s $(NATIVE_LIBS_FILE) || { echo "rustc reported no native-static-libs"; exit 1; }

install: lib
	install -d "$(DESTDIR)$(LIBDIR)" "$(DESTDIR)$(INCLUDEDIR)" "$(DESTDIR)$(PCDIR)"
	install -m 644 crates/callwheel-ffi/include/callwheel.h "$(DESTDIR)$(INCLUDEDIR)/callwheel.h"
	install -m 644 $(BUILT)/libcallwheel_ffi.a "$(DESTDIR)$(LIBDIR)/libcallwheel.a"
	install -m 755 $(BUILT)/libcallwheel_ffi.so "$(DESTDIR)$(LIBDIR)/libcallwheel.so.$(VERSION)"
	ln -sf libcallwheel.so.$(VERSION) "$(DESTDIR)$(LIBDIR)/$(SONAME)"
	ln -sf $(SONAME) "$(DESTDIR)$(LIBDIR)/libcallwheel.so"
	for pc in callwheel callwheel-static; do \
		sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
			-e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
			-e 's|@PRIVATE_LIBS@|$(PRIVATE_LIBS)|' \
			crates/callwheel-ffi/$$pc.pc.in > "$(DESTDIR)$(PCDIR)/$$pc.pc"; \
	done

uninstall:
	rm -f "$(DESTDIR)$(INCLUDEDIR)/callwheel.h" "$(DESTDIR)$(LIBDIR)/libcallwheel.a" \
		"$(DESTDIR)$(LIBDIR)/libcallwheel.so.$(VERSION)" "$(DESTDIR)$(LIBDIR)/$(SONAME)" \
		"$(DESTDIR)$(LIBDIR)/libcallwheel.so" "$(DESTDIR)$(PCDIR)/callwheel.pc" \
		"$(DESTDIR)$(PCDIR)/callwheel-static.pc"

# Each example is built three ways through pkg-config and run: against the shared library
# (found through the rpath given here), with libcallwheel.a linked in (checked to load no
# libcallwheel.so, then run from a directory of its own, as on a machine without the shared
# library), and fully static (-static, where the C library's static archive is installed).
C_EXAMPLES := quick_start event_loop
C_OUT := target/c-examples
CFLAGS_EX := -std=c11 -Wall -Wextra -Werror
c-examples:
	mkdir -p $(C_OUT)
	set -e; export PKG_CONFIG_PATH="$(PCDIR)$${PKG_CONFIG_PATH:+:$$PKG_CONFIG_PATH}"; \
	alone=$$(mktemp -d); \
	for ex in $(C_EXAMPLES); do \
		$(CC) $(CFLAGS_EX) -o $(C_OUT)/$$ex examples/c/$$ex.c \
			$$(pkg-config --cflags --libs callwheel) -Wl,-rpath,$(LIBDIR); \
		$(CC) $(CFLAGS_EX) -o $$alone/$$ex-static examples/c/$$ex.c \
			$$(pkg-config --cflags --libs callwheel-static); \
		echo "== $$ex (shared)"; ./$(C_OUT)/$$ex; \
		if readelf -d $$alone/$$ex-static | grep -q 'NEEDED.*libcallwheel'; then \
			echo "$$ex-static needs libcallwheel.so"; exit 1; fi; \
		echo "== $$ex (libcallwheel.a linked in, run with no shared library beside it)"; \
		(cd $$alone && env -u LD_LIBRARY_PATH ./$$ex-static); \
	done; \
	rm -rf $$alone; \
	if echo 'int main(void){return 0;}' | $(CC) -static -x c - -o $(C_OUT)/probe 2>/dev/null; then \
		for ex in $(C_EXAMPLES); do \
			$(CC) $(CFLAGS_EX) -static -o $(C_OUT)/$$ex-full-static examples/c/$$ex.c \
				$$(pkg-config --static --cflags --libs callwheel); \
			echo "== $$ex (-static)"; ./$(C_OUT)/$$ex-full-static; \
		done; \
	else echo "SKIPPED -static: this system has no static C library"; fi

clean-c:
	rm -rf $(C_OUT)
