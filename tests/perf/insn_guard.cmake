# Instruction-count guard (cmake -P): counts the guest instructions `run`
# executes under qemu-aarch64 per decode token and per prefill token of three
# small synth models, on each CPU model in CPUS, and compares them with the
# figures recorded in BASELINE. Fails when one rises more than 2%. Counts are
# deterministic (same binary, input and -cpu model), unlike time under qemu.
#
#   per decode token  = (count at -n 24 - count at -n 8) / 16, from BOS
#   per prefill token = (count for a 50-token prompt - for an 18-token one) / 32, at -n 1
#
# With UPDATE=ON it rewrites BASELINE with the measured figures instead: do that
# in the same commit as the change that moved them, and say why in its message.
# Inputs: QEMU, RUN, SYNTH (aarch64 binaries), PLUGIN_SOURCE (insncount.c),
# BASELINE, WORK_DIR, CPUS ("label=cpu@@..."), UPDATE.
string(REPLACE "@@" ";" CPUS "${CPUS}")
if(NOT EXISTS "${PLUGIN_SOURCE}")
  message("SKIPPED: missing ${PLUGIN_SOURCE}")
  return()
endif()
file(MAKE_DIRECTORY "${WORK_DIR}")
set(plugin "${WORK_DIR}/libinsncount.so")
execute_process(COMMAND cc -O2 -shared -fPIC -o "${plugin}" "${PLUGIN_SOURCE}" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the insncount plugin failed: ${err}")
endif()

# A llama of 4 layers, dim 256, 8 heads over 2 KV heads, FFN 768, vocabulary
# 2048 (every row length a multiple of 256, so Q4_K_M gets its K-quant kernels
# rather than the fallback types), small enough for seconds under qemu; and a
# gemma3 of the same size whose even layers attend to a window of 16, which
# the prompts and the decode run past (a sliding-window model, issue 26); and
# the llama as Q5_K_M (Q5_K and Q6_K: the mix most downloaded after Q4_K_M).
set(models Q4_0 Q4_K_M Q5_K_M gemma3-Q4_0)
set(args_Q4_0 --arch llama --n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 2 --n-ff 768 --type Q4_0)
set(args_Q4_K_M --arch llama --n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 2 --n-ff 768 --type Q4_K_M)
set(args_Q5_K_M --arch llama --n-embd 256 --n-layer 4 --n-head 8 --n-head-kv 2 --n-ff 768 --type Q5_K_M)
set(args_gemma3-Q4_0 --arch gemma3 --n-embd 256 --n-layer 4 --n-head 4 --n-head-kv 1 --head-dim 64 --n-ff 768
                     --set attention.sliding_window=16 --set attention.sliding_window_pattern=2 --type Q4_0)
foreach(name IN LISTS models)
  set(model "${WORK_DIR}/guard-${name}.gguf")
  execute_process(COMMAND ${QEMU} -cpu cortex-a53 ${SYNTH} ${args_${name}} --n-vocab 2048 --ctx 256 --seed 7 -t 1
                          --no-progress -o ${model}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "synth ${name} failed: ${out}${err}")
  endif()
endforeach()

# count(<var> <cpu> <args...>): instructions of one `run`.
function(count var cpu)
  execute_process(COMMAND ${QEMU} -cpu ${cpu} -plugin ${plugin} ${RUN} --temp 0 -t 1 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT err MATCHES "insncount: total ([0-9]+)")
    message(FATAL_ERROR "run failed under -cpu ${cpu} (${ARGN}): ${out}${err}")
  endif()
  set(${var} ${CMAKE_MATCH_1} PARENT_SCOPE)
endfunction()

string(REPEAT "x" 16 short_prompt)  # BOS, "▁" and 16 byte tokens: 18
string(REPEAT "x" 48 long_prompt)   # 50 tokens
set(measured "")
foreach(entry IN LISTS CPUS)
  string(REGEX MATCH "^([^=]+)=(.+)$" _ "${entry}")
  set(label ${CMAKE_MATCH_1})
  set(cpu ${CMAKE_MATCH_2})
  foreach(type IN LISTS models)
    set(model "${WORK_DIR}/guard-${type}.gguf")
    count(d8 ${cpu} -m ${model} -n 8 --ignore-eos)
    count(d24 ${cpu} -m ${model} -n 24 --ignore-eos)
    count(p18 ${cpu} -m ${model} -p ${short_prompt} -n 1)
    count(p50 ${cpu} -m ${model} -p ${long_prompt} -n 1)
    math(EXPR decode "(${d24} - ${d8}) / 16")
    math(EXPR prefill "(${p50} - ${p18}) / 32")
    list(APPEND measured "${label} ${type} decode ${decode}" "${label} ${type} prefill ${prefill}")
  endforeach()
endforeach()

if(UPDATE)
  list(JOIN measured "\n" lines)
  file(WRITE "${BASELINE}" "# Instructions per token under qemu-aarch64, written by tests/perf/insn_guard.cmake\n"
                           "# (UPDATE=ON); <cpu label> <model type> <phase> <instructions per token>\n${lines}\n")
  message("wrote ${BASELINE}:\n${lines}")
  return()
endif()

file(STRINGS "${BASELINE}" recorded REGEX "^[^#]")
set(failures "")
foreach(line IN LISTS measured)
  string(REGEX MATCH "^(.+) ([0-9]+)$" _ "${line}")
  set(key "${CMAKE_MATCH_1}")
  set(now ${CMAKE_MATCH_2})
  set(was "")
  foreach(r IN LISTS recorded)
    if(r MATCHES "^${key} ([0-9]+)$")
      set(was ${CMAKE_MATCH_1})
    endif()
  endforeach()
  if(was STREQUAL "")
    list(APPEND failures "${key}: ${now} per token, not recorded in ${BASELINE}")
    continue()
  endif()
  math(EXPR permille "(${now} - ${was}) * 1000 / ${was}")
  message("${key}: ${now} per token (recorded ${was}, ${permille} per mille)")
  if(now GREATER was AND permille GREATER 20)
    list(APPEND failures "${key}: ${now} per token, ${permille} per mille above the recorded ${was}")
  elseif(permille LESS -20)
    message("  ${key} fell more than 2%: record the new figure (UPDATE=ON, see tests/perf/CMakeLists.txt)")
  endif()
endforeach()
if(failures)
  list(JOIN failures "\n  " text)
  message(FATAL_ERROR "instruction counts rose by more than 2%:\n  ${text}\n"
                      "If the rise is deliberate, record it (tests/perf/CMakeLists.txt) in the same commit.")
endif()
