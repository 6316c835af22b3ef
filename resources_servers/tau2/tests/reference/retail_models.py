"""The retail data model of tau2-bench (tau2/domains/retail/data_model.py): fields, types and order."""
import json
from typing import Dict, List, Literal, Optional, Union
from pydantic import BaseModel, ConfigDict

class Variant(BaseModel):
    item_id: str; options: Dict[str, str]; available: bool; price: float
class Product(BaseModel):
    name: str; product_id: str; variants: Dict[str, Variant]
class UserName(BaseModel):
    first_name: str; last_name: str
class UserAddress(BaseModel):
    address1: str; address2: str; city: str; country: str; state: str; zip: str
class PaymentMethodBase(BaseModel):
    source: str; id: str
class CreditCard(PaymentMethodBase):
    source: Literal["credit_card"]; brand: str; last_four: str
class Paypal(PaymentMethodBase):
    source: Literal["paypal"]
class GiftCard(PaymentMethodBase):
    source: Literal["gift_card"]; balance: float; id: str
class User(BaseModel):
    user_id: str; name: UserName; address: UserAddress; email: str
    payment_methods: Dict[str, Union[CreditCard, GiftCard, Paypal]]; orders: List[str]
class OrderFullfilment(BaseModel):
    tracking_id: list[str]; item_ids: list[str]
class OrderItem(BaseModel):
    name: str; product_id: str; item_id: str; price: float; options: Dict[str, str]
class OrderPayment(BaseModel):
    transaction_type: Literal["payment", "refund"]; amount: float; payment_method_id: str
class Order(BaseModel):
    order_id: str; user_id: str; address: UserAddress; items: List[OrderItem]
    status: Literal["processed","pending","pending (item modified)","delivered","cancelled","exchange requested","return requested"]
    fulfillments: List[OrderFullfilment]; payment_history: List[OrderPayment]
    cancel_reason: Optional[Literal["no longer needed", "ordered by mistake"]] = None
    exchange_items: Optional[List[str]] = None
    exchange_new_items: Optional[List[str]] = None
    exchange_payment_method_id: Optional[str] = None
    exchange_price_difference: Optional[float] = None
    return_items: Optional[List[str]] = None
    return_payment_method_id: Optional[str] = None
class RetailDB(BaseModel):
    model_config = ConfigDict(extra="forbid")
    products: Dict[str, Product]; users: Dict[str, User]; orders: Dict[str, Order]

