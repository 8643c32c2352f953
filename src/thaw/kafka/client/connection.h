// A Kafka connection of Thaw's own, over asio (C++20 coroutines) and the
// generated codec: the tiered proxy's leg to an upstream broker (merged/),
// and the connection its control requests use.
//
//   auto conn = co_await Connection::Open(executor, "broker:9092", options);
//   co_await conn->WriteFrame(frame);           // a whole frame, size prefix included
//   co_await conn->ReadFrame(&frame);           // one response frame, bounded
//   auto resp = co_await conn->Call<msg::MetadataRequest, msg::MetadataResponse>(req, version);
//
// Frames are read whole, their size checked against max_frame_bytes before
// anything is allocated. One reader and one writer at a time: the caller
// orders its calls (the proxy does, per connection pair).
#pragma once

#include <asio.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "thaw/common/status.h"
#include "thaw/kafka/protocol/messages.h"
#include "thaw/kafka/protocol/wire.h"
#include "thaw/kafka/stream.h"

namespace thaw::kafka::client {

struct ConnectionOptions {
  std::chrono::milliseconds connect_timeout{10000};
  // How long Thaw waits for the answer to a request of its own (not to a
  // client's forwarded request: its client times that out itself).
  std::chrono::milliseconds request_timeout{30000};
  // Largest response frame accepted; a bigger size prefix fails the read
  // before allocating (the connection is then unusable).
  int32_t max_frame_bytes = 256 << 20;
  std::string client_id = "thaw";
  // security.protocol=SSL: TLS with ssl.ca.location (or the system's CAs),
  // ssl.certificate.location + ssl.key.location (mutual TLS), and host name
  // verification unless ssl.endpoint.identification.algorithm is empty/none.
  struct Tls {
    bool enabled = false;
    std::string ca_file, cert_file, key_file;
    bool verify_hostname = true;
    std::shared_ptr<asio::ssl::context> context;  // made by PrepareTls
  } tls;
  // security.protocol=SASL_PLAINTEXT or SASL_SSL: Thaw's OWN connections
  // (the tiered proxy's Metadata to learn the brokers) authenticate with
  // these (kafka/client/sasl_client.h). A client's connection never does:
  // the client's SaslHandshake/SaslAuthenticate pass through on it.
  struct Sasl {
    bool enabled = false;
    std::string mechanism = "GSSAPI";  // librdkafka's default: refused until set
    std::string username, password;    // the password resolved (@FILE, ${env:NAME}), never logged
  } sasl;
};

// Makes options->tls.context from the ssl.* properties (after every
// ApplyProperty); errors name the property and file. No-op without TLS.
Status PrepareTls(ConnectionOptions* options);

// Sets one upstream client property (`thaw serve --upstream -X/-F`), by the
// name Kafka clients give it:
//   socket.connection.setup.timeout.ms  connect_timeout
//   request.timeout.ms                  request_timeout
//   receive.message.max.bytes           max_frame_bytes (1 MiB..2 GiB-1)
//   client.id                           client_id
//   security.protocol                   PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL
//   sasl.mechanism(s)                   PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512
//   sasl.username, sasl.password        (the password may be @FILE or ${env:NAME})
//   ssl.ca.location, ssl.certificate.location, ssl.key.location,
//   ssl.endpoint.identification.algorithm (https, or none/empty)
// Any other name is refused (Thaw's connection is not librdkafka: a
// property it would ignore must not look applied). `origin` ("-X", "-F
// FILE") starts the error.
Status ApplyProperty(std::string_view name, std::string_view value, std::string_view origin,
                     ConnectionOptions* options);

// Whether host:port accepts a TCP connection within `timeout` (a blocking
// check on an io_context of its own, for /readyz).
Status CheckReachable(const std::string& host, uint16_t port, std::chrono::milliseconds timeout);

// host:port, with [v6]:port; the error names `what`.
Result<std::pair<std::string, uint16_t>> ParseAddress(std::string_view address, std::string_view what);

// The 4-byte big-endian size prefix of a frame.
int32_t FrameSize(const uint8_t* prefix);
// A frame's request header fields every version starts with (api key,
// version, correlation id); the frame excludes its size prefix. False when
// it is shorter than 8 bytes.
struct RequestPeek {
  int16_t api_key = 0;
  int16_t api_version = 0;
  int32_t correlation_id = 0;
};
bool PeekRequest(std::string_view frame, RequestPeek* out);
// A response frame's correlation id (its first 4 bytes).
bool PeekCorrelationId(std::string_view frame, int32_t* out);

// A whole frame (size prefix, header, body) for `body` at header version
// `header_version`.
std::string EncodeRequestFrame(const msg::RequestHeader& header, int16_t header_version, std::string_view body);
std::string EncodeResponseFrame(int32_t correlation_id, int16_t header_version, std::string_view body);

class Connection {
 public:
  // Resolves and connects, trying each address of the host in turn, within
  // options.connect_timeout. The error names the address.
  static asio::awaitable<Result<std::unique_ptr<Connection>>> Open(asio::any_io_executor executor,
                                                                    std::string host, uint16_t port,
                                                                    ConnectionOptions options = {});

  const std::string& address() const { return address_; }
  // The byte stream (plain or TLS): for relaying a response as it comes.
  Stream& stream() { return stream_; }

  // Writes a whole frame (size prefix included).
  asio::awaitable<Status> WriteFrame(std::string_view frame);
  // Reads one frame (without its size prefix) into *frame.
  asio::awaitable<Status> ReadFrame(std::string* frame);

  // One request and its response, typed: the correlation ids are Thaw's
  // own (this connection's counter), checked on the way back. Only when no
  // other request is in flight on this connection.
  // `client_id` (default: the options') names whom the broker's quotas and
  // request logs count the request to.
  template <typename Req, typename Resp>
  asio::awaitable<Result<Resp>> Call(const Req& req, int16_t version,
                                     std::optional<std::string> client_id = std::nullopt) {
    msg::RequestHeader header;
    header.request_api_key = Req::kApiKey;
    header.request_api_version = version;
    header.correlation_id = next_correlation_id_++;
    header.client_id = client_id ? std::move(client_id) : std::optional<std::string>(options_.client_id);
    WireWriter body;
    req.Write(body, version);
    const std::string frame =
        EncodeRequestFrame(header, msg::RequestHeaderVersion(Req::kApiKey, version), body.data());
    if (Status st = co_await WriteFrame(frame); !st.ok()) co_return st;
    std::string reply;
    if (Status st = co_await ReadFrame(&reply); !st.ok()) co_return st;
    WireReader in(reply);
    msg::ResponseHeader rh;
    if (Status st = rh.Read(in, msg::ResponseHeaderVersion(Req::kApiKey, version)); !st.ok()) co_return st;
    if (rh.correlation_id != header.correlation_id) {
      co_return Status::IOError("{}: response correlation id {} for request {} ({} v{})", address_,
                                rh.correlation_id, header.correlation_id, Req::kName, version);
    }
    Resp resp;
    if (Status st = resp.Read(in, version); !st.ok()) {
      co_return Status::IOError("{}: {} v{} response does not decode: {}", address_, Req::kName, version,
                                st.message());
    }
    co_return resp;
  }

  void Close();

 private:
  Connection(Stream stream, std::string address, ConnectionOptions options)
      : stream_(std::move(stream)), address_(std::move(address)), options_(std::move(options)) {}

  Stream stream_;
  std::string address_;
  ConnectionOptions options_;
  // Thaw's own requests count down from here, far from the clients' ids.
  int32_t next_correlation_id_ = 0x7f000000;
};

}  // namespace thaw::kafka::client
