# CTest driver (cmake -P): install the build to a temporary prefix, configure and build the tiny
# projects in this folder against it twice (with LibTorch: every exported target; without:
# core, reports and prometheus only), run them, and check what they reported.
# Inputs: BUILD_DIR, SOURCE_DIR (this folder), WORK_DIR, GENERATOR, Torch_DIR (may be empty),
# TORCH_SETTINGS (optional: the build's prefix path, C++ flags and CUDA Toolkit, for a wheel's
# LibTorch).
foreach(var BUILD_DIR SOURCE_DIR WORK_DIR GENERATOR)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_consumer_test.cmake: ${var} not set")
  endif()
endforeach()

function(run step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${step} failed (${rc}):\n${out}\n${err}")
  endif()
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE "${WORK_DIR}")
run("install" ${CMAKE_COMMAND} --install "${BUILD_DIR}" --prefix "${WORK_DIR}/prefix")
set(torch_arg "")
if(Torch_DIR)
  set(torch_arg "-DTorch_DIR=${Torch_DIR}")
endif()
if(TORCH_SETTINGS)
  include("${TORCH_SETTINGS}")
  # Through the environment: run() passes its arguments on as a list, which would split a list.
  string(REPLACE ";" ":" env_prefix_path "${CONSUMER_PREFIX_PATH}")
  set(ENV{CMAKE_PREFIX_PATH} "${env_prefix_path}")
  list(APPEND torch_arg "-DCMAKE_CXX_FLAGS=${CONSUMER_CXX_FLAGS}")
  if(CONSUMER_CUDA_ROOT)
    list(APPEND torch_arg "-DCUDA_TOOLKIT_ROOT_DIR=${CONSUMER_CUDA_ROOT}"
         "-DCUDAToolkit_ROOT=${CONSUMER_CUDA_ROOT}" "-DCMAKE_CUDA_COMPILER=${CONSUMER_CUDA_COMPILER}")
    # nvcc finds ptxas through PATH: the toolkit's own first.
    set(ENV{PATH} "${CONSUMER_CUDA_ROOT}/bin:$ENV{PATH}")
  endif()
endif()
function(expect what actual expected)
  if(NOT "${actual}" STREQUAL "${expected}")
    message(FATAL_ERROR "${what}: expected '${expected}', got '${actual}'\n${json}")
  endif()
endfunction()

# Checks that each KEY of the JSON object in `json` has VALUE: expect_keys(WHAT KEY VALUE ...).
function(expect_keys what)
  set(pairs ${ARGN})
  while(pairs)
    list(POP_FRONT pairs key value)
    string(JSON actual GET "${json}" ${key})
    expect("${what}: ${key}" "${actual}" "${value}")
  endwhile()
endfunction()

# Runs reports_consumer from `build_dir` and checks its output: two runs read back, a JSON report
# with its schema and the verdict worded as the report words it, and the exporter serving steps
# when the build has prometheus-cpp.
function(check_reports_consumer build_dir)
  file(MAKE_DIRECTORY "${build_dir}/runs")
  run("reports_consumer" "${build_dir}/reports_consumer" "${build_dir}/runs")
  set(json "${last_output}")
  message(STATUS "reports_consumer output: ${json}")
  expect_keys("reports_consumer (runs read back, JSON report schema, its verdict's words)" steps_b 120
              report_schema 1 summary_as_report ON)
  string(JSON have_prometheus GET "${json}" prometheus_available)
  string(JSON served GET "${json}" steps_served)
  if(have_prometheus STREQUAL "ON")
    expect("exporter serves recompdiag_steps_total" "${served}" "1")
  endif()
endfunction()

# Without LibTorch: only the components that do not need it.
run("configure without LibTorch" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build-notorch"
    -G "${GENERATOR}" -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix"
    -DCONSUMER_WITH_TORCH=OFF)
run("build without LibTorch" ${CMAKE_COMMAND} --build "${WORK_DIR}/build-notorch" --parallel 2)
check_reports_consumer("${WORK_DIR}/build-notorch")

# With LibTorch: every exported target.
run("configure" ${CMAKE_COMMAND} -S "${SOURCE_DIR}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
    -DCMAKE_BUILD_TYPE=Release "-DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix" ${torch_arg})
run("build" ${CMAKE_COMMAND} --build "${WORK_DIR}/build" --parallel 2)
check_reports_consumer("${WORK_DIR}/build")
# The 0.6 API: core's plateau schedule, the one table of counts (words, umbrellas, gates in its
# order) and ProbeCounts' transfer flag (CMake reads JSON true as ON).
run("consumer_api_0_6" "${WORK_DIR}/build/consumer_api_0_6" "${WORK_DIR}/api_0_6.jsonl")
set(json "${last_output}")
expect_keys("the 0.6 API" steps 4 lr_drops 3 table ON jit_compiles 0)
# The 0.7 API: the one sampling default, checked health thresholds, a run's history and its
# series, and an umbrella's total from the table.
run("consumer_api_0_7" "${WORK_DIR}/build/consumer_api_0_7" "${WORK_DIR}/api_0_7.jsonl")
set(json "${last_output}")
expect_keys("the 0.7 API" steps 30 phases 1 series ON checked ON compiles 0)
# The README's trainer writes its run file: header, 300 steps in two phases, the summary.
run("readme_example" "${WORK_DIR}/build/readme_example" "${WORK_DIR}/readme_run.jsonl")
file(STRINGS "${WORK_DIR}/readme_run.jsonl" readme_steps REGEX "\"type\":\"step\"")
list(LENGTH readme_steps n_readme_steps)
expect("the README trainer's steps" "${n_readme_steps}" "300")
file(STRINGS "${WORK_DIR}/readme_run.jsonl" readme_phase2 REGEX "\"phase\":2")
if(NOT readme_phase2)
  message(FATAL_ERROR "the README trainer's run file has no phase 2")
endif()
file(STRINGS "${WORK_DIR}/readme_run.jsonl" readme_summary REGEX "\"type\":\"summary\"")
if(NOT readme_summary)
  message(FATAL_ERROR "the README trainer's run file has no summary")
endif()
# The README's gate, as written there, on the README's trainer for both builds: the installed
# `recompdiag ab` pairs them step by step and exits 0 (nothing compiles more; a timing regression
# beyond 5% between one binary and itself is what --threshold keeps rare, so the run is retried
# once before it fails the test).
file(READ "${SOURCE_DIR}/../../README.md" readme)
string(REGEX MATCH "\nrecompdiag ab [^\n]*" gate_line "${readme}")
if(NOT gate_line)
  message(FATAL_ERROR "README.md has no `recompdiag ab` gate line")
endif()
string(STRIP "${gate_line}" gate_line)
string(REPLACE "build-base/my_trainer" "${WORK_DIR}/build/readme_example" gate_line "${gate_line}")
string(REPLACE "build/my_trainer" "${WORK_DIR}/build/readme_example" gate_line "${gate_line}")
string(REPLACE "--out-dir gate" "--out-dir ${WORK_DIR}/gate" gate_line "${gate_line}")
set(ENV{PATH} "${WORK_DIR}/prefix/bin:$ENV{PATH}")
foreach(attempt 1 2)
  execute_process(COMMAND sh -c "${gate_line} --quiet" RESULT_VARIABLE gate_rc
                  OUTPUT_VARIABLE gate_out ERROR_VARIABLE gate_err)
  if(gate_rc EQUAL 0)
    break()
  endif()
  message(STATUS "README gate, attempt ${attempt}: exit ${gate_rc}\n${gate_out}\n${gate_err}")
endforeach()
expect("the README's gate on one trainer against itself" "${gate_rc}" "0")
file(READ "${WORK_DIR}/gate/report.json" json)
string(JSON unit GET "${json}" unit)
expect("the README trainer's steps paired under ab" "${unit}" "step_pairs")
run("consumer" "${WORK_DIR}/build/consumer")
set(json "${last_output}")
message(STATUS "consumer output: ${json}")

string(JSON dispatcher_ok GET "${json}" probes dispatch available)
expect("dispatcher probe available" "${dispatcher_ok}" "ON")
string(JSON cupti_reason GET "${json}" probes cupti reason)
message(STATUS "cupti: ${cupti_reason}")
string(JSON n_steps LENGTH "${json}" steps)
expect("steps" "${n_steps}" "5")
string(JSON with_state GET "${json}" steps 4 params_with_state)
expect("optimizer state found for both parameters" "${with_state}" "2")
string(JSON step_max GET "${json}" steps 4 step_max)
expect("Adam step counter" "${step_max}" "5")
string(JSON off_device GET "${json}" steps 4 state_off_device)
expect("state on the parameters' device" "${off_device}" "0")
string(JSON ops GET "${json}" steps 1 ops)
if(ops LESS_EQUAL 0)
  message(FATAL_ERROR "dispatcher counted no ops: ${json}")
endif()
string(JSON alerts_2 GET "${json}" steps 2 alerts)
string(JSON alerts_3 GET "${json}" steps 3 alerts)
if(alerts_2 MATCHES "lr_not_in_effect")
  message(FATAL_ERROR "lr alert before the trap: ${json}")
endif()
if(NOT alerts_3 MATCHES "lr_not_in_effect")
  message(FATAL_ERROR "the lr trap at step 3 was not flagged: ${json}")
endif()
message(STATUS "consumer test passed")
