#include "collectives/gloo_device.h"

#include <glog/logging.h>
#include <sched.h>

#include <thread>

#include "absl/strings/str_cat.h"
#include "collectives/gloo_error.h"
#include "gloo/transport/tcp/device.h"

namespace ringside {

absl::StatusOr<std::shared_ptr<gloo::transport::Device>> CreateGlooTcpDevice(
    const std::string& host, const std::string& interface,
    GlooEventLoop loop, absl::string_view where, bool* idle) {
  const bool idle_event_loop = loop == GlooEventLoop::kIdle;
  SetGlooLoopPacing(loop == GlooEventLoop::kPaced);
  gloo::transport::tcp::attr attr;
  if (!interface.empty()) {
    attr.iface = interface;
  } else {
    attr.hostname = host;
  }
  std::shared_ptr<gloo::transport::Device> device;
  bool made_idle = false;
  absl::Status made;
  auto create = [&] {
    made = RS_GLOO_CALL(
        absl::StrCat(where, ": creating the tcp device on ",
                     interface.empty() ? host : interface),
        device = gloo::transport::tcp::CreateDevice(attr));
  };
  if (idle_event_loop) {
    // The loop thread inherits this helper's policy; the caller keeps its.
    std::thread helper([&] {
      const sched_param param{};
      made_idle = sched_setscheduler(0, SCHED_IDLE, &param) == 0;
      create();
    });
    helper.join();
  } else {
    create();
  }
  if (!made.ok()) return absl::UnavailableError(made.message());
  if (idle_event_loop && !made_idle) {
    LOG(WARNING) << where
                 << ": SCHED_IDLE refused; Gloo's event loop runs at the "
                    "normal policy (collectives/gloo_device.h)";
  }
  if (idle != nullptr) *idle = made_idle;
  return device;
}

}  // namespace ringside
