# Included from reports/CMakeLists.txt: the recompdiag::prometheus target, kept in its own file
# so the live-metrics target and the renderers can change without editing the same lines.
# recompdiag::prometheus: live metrics (issue 5). Always defined so the trainer links it without an
# #if; the exporter itself is in the source list only when prometheus-cpp was found, otherwise the
# factory refuses --metrics-addr/--pushgateway with an InputError. No LibTorch here.
if(RECOMPDIAG_HAVE_PROMETHEUS)
  set(recompdiag_prometheus_impl src/prometheus_exporter.cpp src/detail/pull_endpoint.cpp
    src/detail/pushgateway.cpp src/detail/thread_stack_floor.cpp)
else()
  set(recompdiag_prometheus_impl src/prometheus_exporter_off.cpp)
endif()
add_library(recompdiag_prometheus src/metrics_options.cpp ${recompdiag_prometheus_impl})
add_library(recompdiag::prometheus ALIAS recompdiag_prometheus)
set_target_properties(recompdiag_prometheus PROPERTIES
  EXPORT_NAME prometheus POSITION_INDEPENDENT_CODE ON)
target_include_directories(recompdiag_prometheus
  PUBLIC $<BUILD_INTERFACE:${CMAKE_CURRENT_SOURCE_DIR}/include> $<INSTALL_INTERFACE:include>
  PRIVATE src)
target_link_libraries(recompdiag_prometheus
  PUBLIC recompdiag::core
  PRIVATE Threads::Threads $<BUILD_INTERFACE:recompdiag_warnings>)
if(RECOMPDIAG_HAVE_PROMETHEUS)
  target_link_libraries(recompdiag_prometheus PRIVATE prometheus-cpp::pull prometheus-cpp::push
                        ${CMAKE_DL_LIBS})
  # civetweb's 100 KiB thread stacks cannot hold a CUDA LibTorch's static TLS: the executable's
  # own pthread_attr_setstacksize raises them, exported so that it precedes libc's
  # (src/detail/thread_stack_floor.cpp).
  target_link_options(recompdiag_prometheus INTERFACE
    "LINKER:--export-dynamic-symbol=pthread_attr_setstacksize")
endif()
