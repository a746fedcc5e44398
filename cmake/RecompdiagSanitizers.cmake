# RECOMPDIAG_SANITIZE: build the whole tree with clang's sanitizers (scripts/sanitize does).
#   ""                   off
#   "address,undefined"  AddressSanitizer + UndefinedBehaviorSanitizer; UBSan reports abort
#   "thread"             ThreadSanitizer
# Every target, the tests and the CLI included, gets the flags; LibTorch itself (Debian's build)
# is not instrumented, which ASan tolerates. Run-time options and suppressions are the script's.
set(RECOMPDIAG_SANITIZE "" CACHE STRING "Sanitizers for the whole tree: address,undefined | thread")
set_property(CACHE RECOMPDIAG_SANITIZE PROPERTY STRINGS "" "address,undefined" "thread")

if(RECOMPDIAG_SANITIZE STREQUAL "")
  set(RECOMPDIAG_WHY_NO_SANITIZE "RECOMPDIAG_SANITIZE is empty; scripts/sanitize sets it")
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "RECOMPDIAG_SANITIZE needs clang (CXX=clang++), not ${CMAKE_CXX_COMPILER_ID}")
endif()
if(NOT RECOMPDIAG_SANITIZE MATCHES "^(address,undefined|undefined,address|address|undefined|thread)$")
  message(FATAL_ERROR "RECOMPDIAG_SANITIZE=${RECOMPDIAG_SANITIZE}: use address,undefined or thread")
endif()

add_compile_options(-fsanitize=${RECOMPDIAG_SANITIZE} -fno-omit-frame-pointer)
add_link_options(-fsanitize=${RECOMPDIAG_SANITIZE})
if(RECOMPDIAG_SANITIZE MATCHES "undefined")
  # Undefined behaviour fails the test that hits it instead of printing and going on.
  add_compile_options(-fno-sanitize-recover=undefined)
endif()
