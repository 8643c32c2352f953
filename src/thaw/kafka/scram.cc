#include "thaw/kafka/scram.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <charconv>

namespace thaw::kafka::scram {

const EVP_MD* Digest(std::string_view mechanism) {
  if (mechanism == "SCRAM-SHA-256") return EVP_sha256();
  if (mechanism == "SCRAM-SHA-512") return EVP_sha512();
  return nullptr;
}

std::string Hmac(const EVP_MD* md, std::string_view key, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  HMAC(md, key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
       out, &n);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string Hash(const EVP_MD* md, std::string_view data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  EVP_Digest(data.data(), data.size(), out, &n, md, nullptr);
  return std::string(reinterpret_cast<char*>(out), n);
}

std::string SaltedPassword(const EVP_MD* md, std::string_view password, std::string_view salt, int32_t iterations) {
  std::string out(static_cast<size_t>(EVP_MD_get_size(md)), '\0');
  PKCS5_PBKDF2_HMAC(password.data(), static_cast<int>(password.size()),
                    reinterpret_cast<const unsigned char*>(salt.data()), static_cast<int>(salt.size()), iterations, md,
                    static_cast<int>(out.size()), reinterpret_cast<unsigned char*>(out.data()));
  return out;
}

std::string Base64(std::string_view raw) {
  std::string out(4 * ((raw.size() + 2) / 3) + 1, '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(raw.data()), static_cast<int>(raw.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> Unbase64(std::string_view b64) {
  if (b64.size() % 4 != 0) return std::nullopt;
  std::string out(b64.size() / 4 * 3 + 1, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(b64.data()), static_cast<int>(b64.size()));
  if (n < 0) return std::nullopt;
  size_t len = static_cast<size_t>(n);
  for (size_t i = b64.size(); i > 0 && b64[i - 1] == '='; --i) --len;  // DecodeBlock counts padding
  out.resize(len);
  return out;
}

bool Equal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// RFC 5802 saslname: "=2C" is ',' and "=3D" is '='.
std::optional<std::string> SaslName(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '=') {
      out += s[i];
      continue;
    }
    if (s.substr(i, 3) == "=2C") {
      out += ',';
    } else if (s.substr(i, 3) == "=3D") {
      out += '=';
    } else {
      return std::nullopt;
    }
    i += 2;
  }
  return out;
}

// "k=v" attributes of a SCRAM message, in order.
std::vector<std::pair<char, std::string>> Attributes(std::string_view msg) {
  std::vector<std::pair<char, std::string>> out;
  size_t at = 0;
  while (at <= msg.size()) {
    const size_t comma = std::min(msg.find(',', at), msg.size());
    const std::string_view part = msg.substr(at, comma - at);
    if (part.size() >= 2 && part[1] == '=') out.emplace_back(part[0], std::string(part.substr(2)));
    at = comma + 1;
  }
  return out;
}

std::string Find(const std::vector<std::pair<char, std::string>>& attrs, char key) {
  for (const auto& [k, v] : attrs) {
    if (k == key) return v;
  }
  return {};
}


namespace {

// RFC 5802 saslname: ',' and '=' escaped.
std::string EscapeName(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ',') {
      out += "=2C";
    } else if (c == '=') {
      out += "=3D";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

std::string Client::First() {
  client_first_bare = "n=" + EscapeName(username) + ",r=" + nonce;
  return "n,," + client_first_bare;
}

Result<std::string> Client::Final(std::string_view server_first) {
  const EVP_MD* md = Digest(mechanism);
  if (!md) return Status::Invalid("SASL mechanism {} is not SCRAM", mechanism);
  const auto attrs = Attributes(server_first);
  const std::string r = Find(attrs, 'r');
  auto salt = Unbase64(Find(attrs, 's'));
  const std::string i = Find(attrs, 'i');
  int32_t iterations = 0;
  auto [end, ec] = std::from_chars(i.data(), i.data() + i.size(), iterations);
  if (r.size() <= nonce.size() || r.compare(0, nonce.size(), nonce) != 0 || !salt || ec != std::errc() ||
      end != i.data() + i.size() || iterations < 1 || iterations > 1'000'000) {
    return Status::Corrupt("the broker's SCRAM server-first message is malformed or does not extend Thaw's nonce");
  }
  const std::string salted = SaltedPassword(md, password, *salt, iterations);
  const std::string client_key = Hmac(md, salted, "Client Key");
  const std::string stored_key = Hash(md, client_key);
  const std::string without_proof = "c=biws,r=" + r;  // biws = base64("n,,")
  const std::string auth_message = client_first_bare + "," + std::string(server_first) + "," + without_proof;
  const std::string signature = Hmac(md, stored_key, auth_message);
  std::string proof(client_key.size(), '\0');
  for (size_t k = 0; k < proof.size(); ++k) proof[k] = static_cast<char>(client_key[k] ^ signature[k]);
  expected_server_signature = Hmac(md, Hmac(md, salted, "Server Key"), auth_message);
  return without_proof + ",p=" + Base64(proof);
}

Status Client::Verify(std::string_view server_final) const {
  const auto attrs = Attributes(server_final);
  if (std::string e = Find(attrs, 'e'); !e.empty()) {
    return Status::PermissionDenied("SCRAM: the broker refused: {}", e);
  }
  auto v = Unbase64(Find(attrs, 'v'));
  if (!v || !Equal(*v, expected_server_signature)) {
    return Status::PermissionDenied(
        "SCRAM: the broker's signature does not match: it does not know this user's credentials (not the broker "
        "you meant?)");
  }
  return Status::OK();
}

}  // namespace thaw::kafka::scram
