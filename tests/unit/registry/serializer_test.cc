// Confluent's serializer settings and subject names (registry/serializer.h).
#include "thaw/registry/serializer.h"

#include <gtest/gtest.h>

namespace thaw::registry {
namespace {

TEST(SerializerSettings, TakesConfluentNamesAndLeavesTheClientsOnes) {
  storage::PropertyMap p{{"url", "http://r"},
                         {"auto.register.schemas", "false"},
                         {"normalize.schemas", "true"},
                         {"value.subject.name.strategy", "io.confluent.kafka.serializers.subject.RecordNameStrategy"},
                         {"basic.auth.user.info", "u:p"}};
  auto s = SerializerSettings::Take(&p, "-X");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  EXPECT_FALSE(s->auto_register);
  EXPECT_TRUE(s->normalize);
  EXPECT_FALSE(s->use_latest);
  EXPECT_EQ(s->strategy, SubjectNameStrategy::kRecord);
  EXPECT_EQ(p.size(), 2u);
  EXPECT_TRUE(p.count("url") && p.count("basic.auth.user.info"));

  storage::PropertyMap latest{{"use.latest.version", "true"}, {"subject.name.strategy", "topic_record_subject_name_strategy"}};
  auto l = SerializerSettings::Take(&latest, "-X");
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->use_latest);
  EXPECT_FALSE(l->auto_register) << "the latest version is used as it is";
  EXPECT_EQ(l->strategy, SubjectNameStrategy::kTopicRecord);

  storage::PropertyMap bad{{"auto.register.schemas", "yes"}};
  EXPECT_EQ(SerializerSettings::Take(&bad, "-X").status().message(), "-X: auto.register.schemas='yes' is not true or false");
  storage::PropertyMap strategy{{"value.subject.name.strategy", "Nope"}};
  EXPECT_EQ(SerializerSettings::Take(&strategy, "-X").status().message(),
            "-X: value.subject.name.strategy 'Nope': use TopicNameStrategy, RecordNameStrategy or "
            "TopicRecordNameStrategy");
}

TEST(SerializerSettings, SubjectNames) {
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kTopic, "orders", "shop.Order"), "orders-value");
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kRecord, "orders", "shop.Order"), "shop.Order");
  EXPECT_EQ(SubjectName(SubjectNameStrategy::kTopicRecord, "orders", "shop.Order"), "orders-shop.Order");
  EXPECT_EQ(DerivedRecordName("orders.v1-eu"), "thaw.orders_v1_eu");
  EXPECT_EQ(DerivedRecordName("2024"), "thaw._2024");
}

}  // namespace
}  // namespace thaw::registry
